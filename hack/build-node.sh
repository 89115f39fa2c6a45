#!/usr/bin/env bash
# Builds what the local cluster's real node runs, besides kubelet and
# kube-proxy (hack/build-k8s.sh), from the Go module proxy into <outdir>:
# containerd, its runc shim and ctr (containerd v2: Debian's containerd 1.6
# lacks the RuntimeConfig CRI call that kubelet v1.37 asks for the cgroup
# driver), crictl, and the CNI plugins the node's bridge network needs
# (<outdir>/cni). runc, iptables and conntrack come from Debian
# (hack/real-node.sh installs them). A binary that already exists is skipped.
# Usage: build-node.sh <outdir>
# Env: CONTAINERD_VERSION, CNI_PLUGINS_VERSION, CRICTL_VERSION.
set -euo pipefail
out=$1
: "${CONTAINERD_VERSION:?}" "${CNI_PLUGINS_VERSION:?}" "${CRICTL_VERSION:?}"
mkdir -p "$out/cni"
out=$(cd "$out" && pwd)

# install <dir> <module@version> <package>... installs the packages' binaries
# into <dir> unless each is there already.
install() {
  local dir=$1 mod=$2; shift 2
  local missing=()
  for p in "$@"; do [ -x "$dir/$(basename "$p")" ] || missing+=("${mod%@*}/$p@${mod#*@}"); done
  [ ${#missing[@]} -eq 0 ] && return
  echo "Building ${missing[*]} into $dir (first time only)"
  GOBIN=$dir CGO_ENABLED=0 go install -trimpath "${missing[@]}"
}

install "$out" "github.com/containerd/containerd/v2@$CONTAINERD_VERSION" \
  cmd/containerd cmd/containerd-shim-runc-v2 cmd/ctr
install "$out" "sigs.k8s.io/cri-tools@$CRICTL_VERSION" cmd/crictl
install "$out/cni" "github.com/containernetworking/plugins@$CNI_PLUGINS_VERSION" \
  plugins/main/bridge plugins/main/loopback plugins/ipam/host-local plugins/meta/portmap
