#!/usr/bin/env bash
# Adds one real node to a local cluster (hack/dev-cluster.sh), or removes it:
# containerd (its CRI plugin, runc, a CNI bridge), a kubelet of the cluster's
# own version and kube-proxy in iptables mode, as local processes, so that
# Pods run real containers and Services route from the host and from Pods.
# kwok's fake nodes stay beside it for scale.
#
# There is one real node per machine: kubelet, kube-proxy and the CNI bridge
# own host-wide things (ports 10250 and 10256, iptables chains, a bridge).
# The node belongs to the cluster that added it until `down` removes it; an
# `up` for another cluster while it is held fails and names the holder.
#
# The node is named sunstrider-node, labelled and tainted
# sunstrider.cn/real-node=true:NoSchedule: only workloads that tolerate the
# taint land on it (the project's tests and `make dev`'s demo), and the Pods
# of namespaces labelled sunstrider.cn/real-node=true (a
# MutatingAdmissionPolicy, real-node/placement.yaml, adds the toleration and
# the node selector to them); the seeds'
# samples (nginx, which cannot be pulled here) stay on kwok's nodes. No
# registry is reachable: images are imported (`import <archive>...`), and
# Pods use them with imagePullPolicy Never or IfNotPresent.
#
# Needs root (containerd, kubelet, iptables). Usage:
#   real-node.sh up                 start the node for $DEV_DIR's cluster
#   real-node.sh import <tar>...    import image archives into the node's runtime
#   real-node.sh down               stop it and remove every trace of it
#   real-node.sh crictl <args>...   crictl against the node's runtime
#   real-node.sh runtime stop|start stop or start containerd alone (a fault)
#   real-node.sh leftovers          what `down` left behind; fails if anything
# Env: K8S_BIN (kubelet, kube-proxy), NODE_BIN (containerd, ctr, crictl,
#      cni/), DEV_DIR (the cluster's folder: kubeconfig, kwok/ with its PKI),
#      NODE_IMAGES (archives imported by up; the pause image among them),
#      REAL_NODE_POD_CIDR (default 10.244.0.0/24).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# By hand (`sudo hack/real-node.sh crictl ps`), the binaries make built.
NODE_BIN=${NODE_BIN:-$(ls -d "$root"/bin/node/*/ 2>/dev/null | tail -1)}
NODE_BIN=${NODE_BIN%/}
K8S_BIN=${K8S_BIN:-$(ls -d "$root"/bin/k8s/*/ 2>/dev/null | tail -1)}
K8S_BIN=${K8S_BIN%/}
NODE_NAME=sunstrider-node
TAINT_KEY=sunstrider.cn/real-node
# Host-wide paths, short enough for unix sockets; the logs stay in DEV_DIR.
LIB=/var/lib/sunstrider-node
RUN=/run/sunstrider-node
ETC=/etc/sunstrider-node
BRIDGE=sunstr0
CNI_NETWORK=sunstrider
POD_CIDR=${REAL_NODE_POD_CIDR:-10.244.0.0/24}
SOCK=$RUN/containerd.sock
PAUSE_IMAGE=${PAUSE_IMAGE:-sunstrider.local/pause:1}

need_root() {
  if [ "$(id -u)" != 0 ]; then echo "real-node.sh: needs root" >&2; exit 1; fi
}

ctr() { "$NODE_BIN/ctr" --address "$SOCK" -n k8s.io "$@"; }
# --timeout: crictl gives each call 2 s by default; a stop (the runtime
# signals, waits, then kills and reaps) can take longer on a busy machine,
# and the call then fails although the runtime carries it out.
crictl() { "$NODE_BIN/crictl" --timeout 30s --runtime-endpoint "unix://$SOCK" --image-endpoint "unix://$SOCK" "$@"; }

# Debian's runc (crun refuses this kernel's cgroups), iptables and conntrack.
host_packages() {
  local missing=()
  command -v runc >/dev/null || missing+=(runc)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  [ ${#missing[@]} -eq 0 ] && return
  echo "Installing ${missing[*]} from Debian"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

wait_for() { # wait_for <seconds> <what> <command>...
  local t=$1 what=$2; shift 2
  for _ in $(seq $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "real-node.sh: $what did not come up within ${t}s" >&2
  return 1
}

start() { # start <name> <command>...: a daemon whose pid and log are kept
  local name=$1; shift
  nohup "$@" >>"$LOGS/$name.log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  echo $! >"$RUN/$name.pid"
}

node_ip() { ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p'; }

write_configs() {
  local kwok=$DEV_DIR/kwok/clusters/$CLUSTER
  mkdir -p "$ETC/cni" "$LIB" "$RUN"
  cat >"$ETC/containerd.toml" <<EOF
version = 3
root = '$LIB/containerd'
state = '$RUN/containerd'
[grpc]
  address = '$SOCK'
[ttrpc]
  address = '$SOCK.ttrpc'
[plugins.'io.containerd.cri.v1.runtime']
  # No CAP_SYS_RESOURCE here, even as root: runc cannot lower a process's
  # OOM score, and every sandbox would fail without this.
  restrict_oom_score_adj = true
  # Network namespaces mounted under the node's state folder, not the
  # host-wide /var/run/netns: down unmounts everything under it, even when
  # a runtime killed hard could not tear its sandboxes down.
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '$(command -v runc)'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['$NODE_BIN/cni']
    conf_dir = '$ETC/cni'
[plugins.'io.containerd.cri.v1.images']
  # registry.k8s.io/pause cannot be pulled: the project's own, imported.
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$PAUSE_IMAGE'
EOF
  cat >"$ETC/cni/10-$CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$RUN/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  cat >"$ETC/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine's kernel has cgroup v1 only; kubelet 1.35+ refuses it unless told.
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
podLogsDir: $LIB/pod-logs
address: $IP
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
# The API server (logs, exec) and metrics readers authenticate with
# certificates of the cluster's CA or tokens, checked by the API server.
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $kwok/pki/ca.crt}
authorization: {mode: Webhook}
registerWithTaints:
- {key: $TAINT_KEY, value: "true", effect: NoSchedule}
# No cluster DNS in the local cluster.
resolvConf: /etc/resolv.conf
# A shared machine's disk is often fuller than kubelet's defaults allow.
evictionHard: {nodefs.available: "1%", imagefs.available: "1%", memory.available: "100Mi"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
}

up() {
  need_root
  : "${K8S_BIN:?}" "${NODE_BIN:?}" "${DEV_DIR:?}" "${CLUSTER:?}"
  local kubeconfig=$DEV_DIR/kubeconfig
  mkdir -p "$RUN"
  exec 8>"$RUN.lock"
  flock -n 8 || { echo "real-node.sh: another real-node.sh is running" >&2; exit 1; }
  if [ -f "$RUN/owner" ] && [ "$(cat "$RUN/owner")" != "$DEV_DIR" ]; then
    if pgrep -F "$RUN/kubelet.pid" >/dev/null 2>&1; then
      echo "real-node.sh: the real node belongs to the cluster of $(cat "$RUN/owner"); remove it there first" >&2
      exit 1
    fi
    down_locked # what a removed cluster left behind
  fi
  if [ -f "$RUN/kubelet.pid" ] && pgrep -F "$RUN/kubelet.pid" >/dev/null 2>&1; then
    echo "Real node $NODE_NAME is already running."
    return
  fi
  host_packages
  LOGS=$DEV_DIR/node
  IP=$(node_ip)
  [ -n "$IP" ] || { echo "real-node.sh: no IPv4 address with a default route" >&2; exit 1; }
  mkdir -p "$LOGS" "$RUN"
  echo "$DEV_DIR" >"$RUN/owner"
  write_configs
  sysctl -qw net.ipv4.ip_forward=1
  modprobe br_netfilter 2>/dev/null || true
  sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true

  start_containerd
  import "${NODE_IMAGES[@]}"

  start kubelet "$K8S_BIN/kubelet" --config "$ETC/kubelet.yaml" --kubeconfig "$kubeconfig" \
    --root-dir "$LIB/kubelet" --hostname-override "$NODE_NAME" --node-ip "$IP" \
    --node-labels "$TAINT_KEY=true"
  start kube-proxy "$K8S_BIN/kube-proxy" --kubeconfig "$kubeconfig" --proxy-mode iptables \
    --hostname-override "$NODE_NAME" --cluster-cidr "$POD_CIDR" --conntrack-max-per-core 0 \
    --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256
  wait_for 60 "kubelet's Node" "$K8S_BIN/kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready \
    "node/$NODE_NAME" --timeout=1s
  wait_for 30 kube-proxy curl -fsS http://127.0.0.1:10256/healthz
  # Pods of namespaces labelled sunstrider.cn/real-node=true land here.
  "$K8S_BIN/kubectl" --kubeconfig "$kubeconfig" apply -f "$root/hack/real-node/placement.yaml" >/dev/null
  echo "Real node $NODE_NAME is up ($IP, containerd $(crictl version 2>/dev/null | sed -n 's/RuntimeVersion: *//p'), logs in $LOGS)."
}

start_containerd() {
  PATH=$NODE_BIN:$PATH start containerd "$NODE_BIN/containerd" --config "$ETC/containerd.toml"
  wait_for 30 containerd crictl info
}

# runtime stop|start: the CRI runtime alone stops (containers keep running
# under their shims, the kubelet cannot reach them) or starts again: a
# fault the chaos test on the real node injects.
runtime() {
  LOGS=$DEV_DIR/node
  case $1 in
    stop) stop_pid containerd ;;
    start) start_containerd ;;
    *) echo "usage: $0 runtime stop|start" >&2; exit 2 ;;
  esac
}

import() {
  local tar
  for tar in "$@"; do
    [ -n "$tar" ] || continue
    ctr images import --local "$tar" >/dev/null
  done
}

down() {
  need_root
  mkdir -p "$(dirname "$RUN")"
  exec 8>"$RUN.lock"
  flock 8
  down_locked
}

stop_pid() { # stop_pid <name>: TERM, then KILL after 10 s
  local f=$RUN/$1.pid
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# drop_chain <table> <chain> deletes the rules that jump to chain, then
# the chain itself.
drop_chain() {
  local t=$1 c=$2 rule
  iptables -t "$t" -S "$c" >/dev/null 2>&1 || return 0
  { iptables -t "$t" -S | grep -E -- "-j $c( |$)" || true; } | sed 's/^-A/-D/' | while read -r rule; do
    eval "iptables -t $t $rule" 2>/dev/null || true
  done
  iptables -t "$t" -F "$c" 2>/dev/null || true
  iptables -t "$t" -X "$c" 2>/dev/null || true
}

# kill_pods kills every process left in the cgroups kubelet made for Pods
# (cgroupfs driver: kubepods under every hierarchy) and waits until they
# are gone.
pod_pids() {
  find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u || true
}
kill_pods() {
  local pids
  for _ in $(seq 50); do
    pids=$(pod_pids)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
    sleep 0.2
  done
  echo "real-node.sh: processes still in the Pods' cgroups: $(pod_pids | tr '\n' ' ')" >&2
}

down_locked() {
  : "${K8S_BIN:?}" "${NODE_BIN:?}"
  stop_pid kubelet
  if [ -S "$SOCK" ]; then
    # Every Pod sandbox stopped and removed: CNI DEL frees its address and
    # its iptables rules, runc removes its cgroups.
    crictl rmp -fa >/dev/null 2>&1 || true
  fi
  stop_pid kube-proxy
  "$K8S_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  stop_pid containerd
  # Shims outlive containerd by design; the node's are stopped with it.
  pkill -9 -f "containerd-shim-runc-v2 .*-address $SOCK" 2>/dev/null || true
  # What still runs in the Pods' cgroups: containers whose sandbox could
  # not be removed above (a runtime or shim killed hard, say) and which
  # outlive their shim. Their mounts and network namespaces go with them.
  kill_pods
  # Mounts under the node's folders (kubelet bind-mounts its root onto
  # itself; volumes, sandboxes' shm, overlay snapshots), deepest first.
  local m
  for _ in 1 2 3; do
    { findmnt -rn -o TARGET | grep -E "^($LIB|$RUN)(/|$)" || true; } | sort -r | while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  # kubelet's own chains (kube-proxy --cleanup took the rest), and any CNI
  # rule of this network left by a sandbox that was not torn down.
  local t c
  for t in filter nat mangle; do
    for c in KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT KUBE-FIREWALL; do
      drop_chain "$t" "$c"
    done
  done
  for c in $(iptables-save -t nat 2>/dev/null | grep -- "$CNI_NETWORK" | grep -o -- '-j CNI-[0-9a-f]*' | cut -c4- | sort -u || true); do
    drop_chain nat "$c"
  done
  # cgroups kubelet made (cgroupfs driver: kubepods under every hierarchy).
  local d
  for d in /sys/fs/cgroup/*/kubepods; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -rf "$LIB" "$RUN" "$ETC"
}

# leftovers prints what a removed node left behind (processes, mounts, the
# bridge, iptables rules, cgroups, folders) and fails when there is any.
leftovers() {
  local found=0 what
  what=$(pgrep -a -f "$K8S_BIN/kubelet|$K8S_BIN/kube-proxy|$NODE_BIN/containerd|containerd-shim-runc-v2 .*-address $SOCK" || true)
  [ -z "$what" ] || { echo "processes left:"; echo "$what"; found=1; }
  what=$(findmnt -rn -o TARGET | grep -E "^($LIB|$RUN)(/|$)" || true)
  [ -z "$what" ] || { echo "mounts left:"; echo "$what"; found=1; }
  if ip link show "$BRIDGE" >/dev/null 2>&1; then echo "interface left: $BRIDGE"; found=1; fi
  what=$(ip -o link show type veth 2>/dev/null | grep -F "master $BRIDGE" || true)
  [ -z "$what" ] || { echo "veths left:"; echo "$what"; found=1; }
  what=$( { iptables-save 2>/dev/null | grep -E -- "KUBE-|$CNI_NETWORK|$BRIDGE|$POD_CIDR"; } || true)
  [ -z "$what" ] || { echo "iptables rules left:"; echo "$what"; found=1; }
  what=$(pod_pids | xargs -r ps -o pid=,args= -p 2>/dev/null || true)
  [ -z "$what" ] || { echo "processes left in the Pods' cgroups:"; echo "$what"; found=1; }
  what=$(ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null || true)
  [ -z "$what" ] || { echo "cgroups left:"; echo "$what"; found=1; }
  for what in "$LIB" "$RUN" "$ETC"; do
    if [ -e "$what" ]; then echo "folder left: $what"; found=1; fi
  done
  [ $found = 0 ] && echo "The real node left nothing behind."
  return $found
}

CLUSTER=${DEV_CLUSTER:-}
IFS=' ' read -r -a NODE_IMAGES <<<"${NODE_IMAGES:-}"
case ${1:-} in
  up) up ;;
  down) down ;;
  import) shift; need_root; import "$@" ;;
  crictl) shift; crictl "$@" ;;
  runtime) shift; need_root; : "${DEV_DIR:?}"; runtime "${1:-}" ;;
  leftovers) need_root; : "${K8S_BIN:?}" "${NODE_BIN:?}"; leftovers ;;
  *) echo "usage: $0 up|down|import <tar>...|crictl <args>...|runtime stop|start|leftovers" >&2; exit 2 ;;
esac
