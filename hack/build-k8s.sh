#!/usr/bin/env bash
# Builds Kubernetes control-plane binaries from the Go module proxy into a
# versioned folder. Usage: build-k8s.sh <outdir> <component>...
# Components: kube-apiserver etcd kubectl kube-controller-manager kube-scheduler
# A component whose binary already exists is skipped.
set -euo pipefail
out=$1; shift
here=$(cd "$(dirname "$0")/k8s" && pwd)
ver=$(awk '{for (i = 1; i < NF; i++) if ($i == "k8s.io/kubernetes") {print $(i+1); exit}}' "$here/go.mod")
if [ -z "$ver" ]; then echo "k8s.io/kubernetes version not found in $here/go.mod" >&2; exit 1; fi
minor=$(echo "$ver" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${ver} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The missing components are built by one `go build`: the two cores compile
# one component's packages while the linker, mostly single-threaded, writes
# another's binary, rather than each build ending on an idle core.
pkgs=() names=()
for c in "$@"; do
  if [ -x "$out/$c" ]; then continue; fi
  case $c in
    etcd) pkg=go.etcd.io/etcd/server/v3; name=server ;; # go names a /v3 package's binary after "server"
    *) pkg=k8s.io/kubernetes/cmd/$c; name=$c ;;
  esac
  pkgs+=("$pkg"); names+=("$c:$name")
done
if [ ${#pkgs[@]} -eq 0 ]; then exit 0; fi
echo "Building ${pkgs[*]} into $out (first time only, several minutes)"
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}")
for n in "${names[@]}"; do
  mv "$tmp/${n#*:}" "$out/${n%%:*}"
done
