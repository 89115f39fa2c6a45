#!/usr/bin/env bash
# Generates the operator's OLM bundle (bundle/, bundle.Dockerfile) with
# hack/bundle from `kustomize build config/default` and config/samples.
# `make bundle` runs it; `make verify` runs it with --check, which generates
# into a temporary directory and fails when the committed bundle differs.
#
# Env (the Makefile's defaults): KUSTOMIZE, BUNDLE_VERSION, BUNDLE_REPLACES,
# BUNDLE_MANAGER_IMG, BUNDLE_CHANNELS, BUNDLE_DEFAULT_CHANNEL.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
KUSTOMIZE=${KUSTOMIZE:-$root/bin/kustomize}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$KUSTOMIZE" build config/default > "$tmp/manifests.yaml"
"$KUSTOMIZE" build config/samples > "$tmp/samples.yaml"

out=$root
[ "${1:-}" = "--check" ] && out=$tmp/out
# hack/bundle is a Go module of its own (its go.mod says why): built there,
# run from here, where its default -base and -icon paths are.
go -C hack/bundle build -o "$tmp/bundle" .
"$tmp/bundle" -manifests "$tmp/manifests.yaml" -samples "$tmp/samples.yaml" -out "$out" \
  -version "${BUNDLE_VERSION:?}" -replaces "${BUNDLE_REPLACES-}" -image "${BUNDLE_MANAGER_IMG:?}" \
  -channels "${BUNDLE_CHANNELS:?}" -default-channel "${BUNDLE_DEFAULT_CHANNEL:?}" >/dev/null

if [ "${1:-}" = "--check" ]; then
  if ! diff -r "$out/bundle" bundle >/dev/null 2>&1 || ! diff "$out/bundle.Dockerfile" bundle.Dockerfile >/dev/null 2>&1; then
    diff -r "$out/bundle" bundle || true
    diff "$out/bundle.Dockerfile" bundle.Dockerfile || true
    echo "bundle/ is out of date: run 'make bundle' and commit the result." >&2
    exit 1
  fi
  exit 0
fi
echo "Wrote bundle/ and bundle.Dockerfile (version $BUNDLE_VERSION, image $BUNDLE_MANAGER_IMG)"
