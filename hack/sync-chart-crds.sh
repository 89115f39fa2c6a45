#!/usr/bin/env bash
# Copies the GENERATED parts of the operator's manifests into the Helm chart,
# so that dist/chart installs exactly what config/default installs:
#   - the CRDs (config/crd, with the conversion webhook patches),
#   - the webhook configurations (config/webhook/manifests.yaml),
#   - the manager's ClusterRole and namespaced Role (config/rbac/role.yaml),
#   - the admin/editor/viewer helper ClusterRoles (config/rbac/*_role.yaml),
#   - the ClusterRole (and binding) of the manager's CA injection
#     (config/rbac/ca_injection_role.yaml),
#   - the ValidatingAdmissionPolicies confining the manager's Pod patches and
#     its other writes, and their bindings (config/rbac/manager_pod_policy.yaml,
#     config/rbac/manager_write_policy.yaml).
# They are taken from `kustomize build config/default` (names already carry
# the sunstrider-operator- prefix) and written one object per file into
# dist/chart/files/generated/, which the chart's templates read with
# .Files.Get and adjust (release namespace, conditions, annotations).
#
# Usage: hack/sync-chart-crds.sh   (after `make manifests`)
# Env:   KUSTOMIZE (default bin/kustomize), CHART_DIR (default dist/chart).
# With --check it fails instead of writing when the chart is out of date.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
KUSTOMIZE=${KUSTOMIZE:-$root/bin/kustomize}
CHART_DIR=${CHART_DIR:-$root/dist/chart}
out=$CHART_DIR/files/generated

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$KUSTOMIZE" build config/default > "$tmp/all.yaml"

# Split into one file per selected object, named <Kind>_<name>.yaml.
mkdir -p "$tmp/generated"
awk -v dir="$tmp/generated" '
  function flush() {
    if (n > 0 && kind != "" && name != "" && keep(kind, name)) {
      file = dir "/" kind "_" name ".yaml"
      for (i = 1; i <= n; i++) print lines[i] > file
      close(file)
    }
    n = 0; kind = ""; name = ""; inmeta = 0
  }
  function keep(k, nm) {
    if (k == "CustomResourceDefinition") return 1
    if (k == "MutatingWebhookConfiguration" || k == "ValidatingWebhookConfiguration") return 1
    if ((k == "ClusterRole" || k == "Role") && nm == "sunstrider-operator-manager-role") return 1
    if (k == "ClusterRole" && nm ~ /-(admin|editor|viewer)-role$/) return 1
    if ((k == "ClusterRole" || k == "ClusterRoleBinding") && nm ~ /^sunstrider-operator-ca-injection-role(binding)?$/) return 1
    if ((k == "ValidatingAdmissionPolicy" || k == "ValidatingAdmissionPolicyBinding") && nm ~ /^sunstrider-operator-manager-(pod-)?writes$/) return 1
    return 0
  }
  /^---$/ { flush(); next }
  {
    lines[++n] = $0
    if ($0 ~ /^kind: /) kind = substr($0, 7)
    if ($0 ~ /^metadata:/) { inmeta = 1; next }
    if ($0 ~ /^[^ ]/) inmeta = 0
    if (inmeta && name == "" && $0 ~ /^  name: /) name = substr($0, 9)
  }
  END { flush() }
' "$tmp/all.yaml"

ls "$tmp/generated/CustomResourceDefinition_"*.yaml >/dev/null 2>&1 ||
  { echo "no CRDs in kustomize build config/default" >&2; exit 1; }

if [ "${1:-}" = "--check" ]; then
  if ! diff -r "$tmp/generated" "$out" >/dev/null 2>&1; then
    diff -r "$tmp/generated" "$out" || true
    echo "dist/chart is out of date: run hack/sync-chart-crds.sh" >&2
    exit 1
  fi
  exit 0
fi

rm -rf "$out"
mkdir -p "$out"
cp "$tmp/generated/"*.yaml "$out/"
echo "Synced $(ls "$out" | wc -l) generated objects into ${out#"$root"/}"
