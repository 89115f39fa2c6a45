#!/usr/bin/env bash
# Runs each fuzz target given as <package>:<target>:<executions> for its
# executions times FUZZ_SCALE, one after another (go test takes one -fuzz
# per package run), and fails when one fails or did not fuzz: a renamed or
# removed target makes go test pass with "no fuzz tests to fuzz", or print
# no "fuzz: elapsed" line. `make fuzz` runs it under hack/fuzzapiserver, so
# the targets whose oracle is an API server share one control plane.
set -euo pipefail
scale=${FUZZ_SCALE:-1}
for t in "$@"; do
  pkg=${t%%:*} rest=${t#*:}
  fn=${rest%%:*} n=$(( ${rest#*:} * scale ))
  start=$(date +%s)
  out=$(go test "$pkg" -run '^$' -fuzz "^$fn\$" -fuzztime="${n}x" 2>&1) || { echo "$out"; echo "FAIL: $fn in $pkg"; exit 1; }
  if grep -qE 'no fuzz tests to fuzz|testing: warning: no tests to run' <<<"$out" || ! grep -q 'fuzz: elapsed' <<<"$out"; then
    echo "$out"; echo "FAIL: $fn in $pkg did not fuzz (renamed or missing target? FUZZ_TARGETS names it)"; exit 1
  fi
  echo "$fn ($pkg): $(grep -o 'execs: [0-9]*' <<<"$out" | tail -1 | cut -d' ' -f2) executions in $(( $(date +%s) - start )) s, no failure"
done
