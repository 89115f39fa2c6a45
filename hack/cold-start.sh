#!/usr/bin/env bash
# Measures the README's quick start as a newcomer meets it: `make dev` in a
# fresh clone of this repository's HEAD with empty Go module and build
# caches (GOMODCACHE, GOCACHE and GOPATH in a temporary folder, so the
# caller's own caches are neither used nor touched: the Go toolchain that
# go.mod names, every module and every compile are fetched and done anew).
# It prints the wall time, then stops the operator, removes the cluster and
# deletes the folder. No other local cluster may be running (make dev's
# ports).
#
# Usage: hack/cold-start.sh [work-dir]   (default: a new temporary folder)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
export GOMODCACHE=$work/gomodcache GOCACHE=$work/gocache GOPATH=$work/gopath

clean() {
  if [ -f "$work/src/bin/dev/manager.pid" ]; then
    kill "$(cat "$work/src/bin/dev/manager.pid")" 2>/dev/null || true
  fi
  [ -d "$work/src" ] && make -C "$work/src" dev-cluster-down >/dev/null 2>&1 || true
  chmod -R u+w "$work" 2>/dev/null || true # the module cache is read-only
  rm -rf "$work"
}
trap clean EXIT

git clone -q "$root" "$work/src"
echo "cold start: make dev in a fresh clone of $(git -C "$root" rev-parse --short HEAD), empty Go caches in $work"
start=$(date +%s)
make -C "$work/src" dev
elapsed=$(($(date +%s) - start))
printf 'cold start: make dev took %d min %d s on %s (%s CPUs)\n' $((elapsed / 60)) $((elapsed % 60)) "$(date -u +%F)" "$(nproc)"
