#!/usr/bin/env bash
# Compares the operator's own cost at two commits on one local cluster: a
# burst of N Applications (namespaces of 100) with the operator alone,
# before and after, in alternating pairs (the second pair in the other
# order), so that both meet the same machine; a shared 2-core machine moves
# every process's CPU by 10 % or more from one minute to the next, which
# separate `make bench` runs cannot tell from a change. Per run it prints
# the convergence, the manager's and kube-apiserver's CPU seconds and the
# machine's, and the manager's share of the machine's CPU (which the
# machine's speed moves least); then the median (min-max) of each per
# commit. The runs' logs stay in the work folder.
#
# Usage: hack/bench-ab.sh BEFORE AFTER [PAIRS] [N]   (commits; PAIRS 5, N 1000)
# Env: K8S_BIN, KWOK_BIN, KUSTOMIZE (as make sets them), AB_DIR (work
# folder; default bin/bench-ab), AB_BEFORE_ARGS and AB_AFTER_ARGS (extra
# test/bench flags of each side, e.g. the same commit twice with
# AB_BEFORE_ARGS=-service-account=pod-policy AB_AFTER_ARGS=-service-account=policies
# weighs the write policy). No other bench cluster may be running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${K8S_BIN:?}" "${KWOK_BIN:?}" "${KUSTOMIZE:?}"
before=${1:?usage: bench-ab.sh BEFORE AFTER [PAIRS] [N]} after=${2:?usage: bench-ab.sh BEFORE AFTER [PAIRS] [N]}
pairs=${3:-5} n=${4:-1000}
dir=${AB_DIR:-$root/bin/bench-ab}
export DEV_DIR=$dir/cluster DEV_CLUSTER=sunstrider-ab K8S_BIN KWOK_BIN

# build COMMIT NAME builds the manager of COMMIT into $dir/manager-NAME.
build() {
  local tree=$dir/tree-$2
  git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1 || true
  git -C "$root" worktree add --detach "$tree" "$1" >/dev/null
  (cd "$tree" && go build -trimpath -o "$dir/manager-$2" ./cmd)
  git -C "$root" worktree remove --force "$tree"
}

rm -rf "$dir/runs" && mkdir -p "$dir/runs"
build "$before" before
build "$after" after
(cd "$root/test" && go build -trimpath -o "$dir/bench" ./bench) # test/ is a Go module of its own
"$root/hack/dev-cluster.sh" down >/dev/null 2>&1 || true
mkdir -p "$DEV_DIR/kwok" && cp "$root/test/bench/kwok.yaml" "$DEV_DIR/kwok/kwok.yaml"
if ! "$root/hack/dev-cluster.sh" up >"$dir/cluster-up.log" 2>&1; then
  echo "the local cluster did not start: $dir/cluster-up.log" >&2
  exit 1
fi
trap '"$root/hack/dev-cluster.sh" down >/dev/null 2>&1' EXIT

echo "hack/bench-ab.sh: N=$n, the operator alone, before $(git -C "$root" rev-parse --short "$before")${AB_BEFORE_ARGS:+ ($AB_BEFORE_ARGS)}, after $(git -C "$root" rev-parse --short "$after")${AB_AFTER_ARGS:+ ($AB_AFTER_ARGS)}, $pairs pairs"
echo "| run | converged s | manager CPU-s | kube-apiserver CPU-s | machine CPU-s | manager share |"
echo "|---|---:|---:|---:|---:|---:|"
for i in $(seq 1 "$pairs"); do
  order="before after"
  if [ $((i % 2)) -eq 0 ]; then order="after before"; fi
  for v in $order; do
    log=$dir/runs/$v-$i.log
    (cd "$root" && "$dir/bench" -n "$n" -references=false -seed=false -per-namespace 100 -restart=false -idle 10s \
      -kubeconfig "$DEV_DIR/kubeconfig" -manager "$dir/manager-$v" -kubectl "$K8S_BIN/kubectl" -kustomize "$KUSTOMIZE" \
      -work-dir "$dir/runs/$v-$i" $(if [ "$v" = before ]; then echo "${AB_BEFORE_ARGS:-}"; else echo "${AB_AFTER_ARGS:-}"; fi)) >"$log" 2>&1 || { echo "run $v $i failed: $log" >&2; exit 1; }
    # The result row ("| N | operator | converged | ... | CPU s | machine CPU s (busy) |")
    # and the CPU-by-process row ("| N | operator | kube-apiserver | ...").
    awk -F'|' -v run="$v $i" -v n="$n" '
      $2+0 == n && $3 ~ /operator/ { rows++
        if (rows == 1) { conv = $4 + 0; mgr = $13 + 0; split($14, m, " "); machine = m[1] + 0 }
        if (rows == 2) { api = $4 + 0 } }
      END { if (rows < 2) { print "no result rows in the log" > "/dev/stderr"; exit 1 }
        printf "| %s | %.1f | %.1f | %.1f | %.1f | %.2f %% |\n", run, conv, mgr, api, machine, 100 * mgr / machine }' "$log"
  done
done | tee "$dir/runs.md"

echo
echo "Median (min-max) of $pairs runs each:"
echo "| commit | converged s | manager CPU-s | kube-apiserver CPU-s | machine CPU-s | manager share % |"
echo "|---|---:|---:|---:|---:|---:|"
for v in before after; do
  grep "^| $v " "$dir/runs.md" | tr -d '%' | awk -F'|' -v v="$v" '
    { for (c = 3; c <= 7; c++) vals[c, NR] = $c + 0 }
    END {
      line = "| " v
      for (c = 3; c <= 7; c++) {
        for (i = 1; i <= NR; i++) s[i] = vals[c, i]
        for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
        med = (NR % 2) ? s[(NR + 1) / 2] : (s[NR / 2] + s[NR / 2 + 1]) / 2
        line = line sprintf(" | %.2f (%.2f-%.2f)", med, s[1], s[NR])
      }
      print line " |" }'
done
