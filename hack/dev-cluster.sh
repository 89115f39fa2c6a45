#!/usr/bin/env bash
# Starts (or stops) a whole local Kubernetes cluster without Docker: kwokctl's
# binary runtime runs etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and the kwok controller as local processes, from binaries
# built from source into bin/. kwok keeps 3 fake nodes Ready and turns every
# Pod scheduled on them Running and Ready (no container ever runs). With
# REAL_NODE=1 (`make dev` as root, `make test-node`) one real node joins them
# (hack/real-node.sh: containerd, kubelet, kube-proxy; docs/local-cluster.md),
# tainted so that only workloads that tolerate it run real containers.
#
# Usage: dev-cluster.sh up|down
# Env: K8S_BIN, KWOK_BIN (binary folders), DEV_DIR (state; default bin/dev),
#      DEV_CLUSTER (cluster name; default sunstrider-dev),
#      DEV_FEATURE_GATES (optional Kubernetes feature gates for every component,
#      e.g. ShardedListAndWatch=true; default none),
#      REAL_NODE (1: add the real node, and fail when it cannot be added;
#      auto: add it when root, else say so in one line and go on; default 0),
#      NODE_BIN, NODE_IMAGES (for the real node: hack/real-node.sh),
#      METRICS_SERVER_BIN (metrics-server, run beside the real node when set)
#      and METRICS_SERVER_MANIFESTS (its kustomize base),
#      WEBHOOK_CLIENT_CERT (1: the API server presents a client certificate
#      to admission webhooks, whose CA is $DEV_DIR/webhook-client/ca.crt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${K8S_BIN:?}" "${KWOK_BIN:?}"
DEV_DIR=${DEV_DIR:-$root/bin/dev}
DEV_CLUSTER=${DEV_CLUSTER:-sunstrider-dev}
kubeconfig=$DEV_DIR/kubeconfig
export KWOK_WORKDIR=$DEV_DIR/kwok
kwokctl=$KWOK_BIN/kwokctl
kubectl=$K8S_BIN/kubectl
feature_gates=()
REAL_NODE=${REAL_NODE:-0}
if [ "$REAL_NODE" = auto ]; then
  if [ "$(id -u)" = 0 ]; then REAL_NODE=1; else
    echo "Not root: the cluster starts without its real node (kwok's fake nodes only; docs/local-cluster.md)."
    REAL_NODE=0
  fi
fi
real_node() { K8S_BIN="$K8S_BIN" DEV_DIR="$DEV_DIR" DEV_CLUSTER="$DEV_CLUSTER" "$root/hack/real-node.sh" "$@"; }
if [ -n "${DEV_FEATURE_GATES:-}" ]; then
  feature_gates=(--kube-feature-gates "$DEV_FEATURE_GATES")
fi

running() {
  "$kwokctl" get clusters 2>/dev/null | grep -qx "$DEV_CLUSTER" &&
    [ -s "$kubeconfig" ] && "$kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1
}

up() {
  mkdir -p "$DEV_DIR"
  # kwokctl picks free ports when it creates a cluster, and they are taken
  # only once its daemons listen: two clusters made at once (make -j2
  # test-e2e test-chaos) could pick the same. One at a time on this machine: the
  # lock is held until this script exits (the daemons do not inherit it).
  exec 9>"${TMPDIR:-/tmp}/sunstrider-dev-cluster.lock"
  flock 9
  if running; then
    echo "Cluster $DEV_CLUSTER is already running."
  else
    # A stopped or half-made cluster of the same name is replaced.
    "$kwokctl" delete cluster --name "$DEV_CLUSTER" --kubeconfig "$kubeconfig" >/dev/null 2>&1 || true
    config=()
    if [ "$REAL_NODE" = 1 ]; then
      # kwok answers only for its own nodes (they carry the annotation), not
      # for the real one; the API server reaches the kubelet by its address
      # (no DNS for the node's name) with the cluster's admin certificate,
      # which the kubelet checks against the cluster's CA.
      pki=$KWOK_WORKDIR/clusters/$DEV_CLUSTER/pki
      cat >"$DEV_DIR/kwok-real-node.yaml" <<CONFIG
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  # Pods reach the API server at the kubernetes Service's address (the
  # first of the Service range): its certificate must name it.
  kubeApiserverCertSANs: [10.0.0.1]
componentsPatches:
- name: kwok-controller
  extraArgs:
  - {key: manage-all-nodes, value: "false"}
  - {key: manage-nodes-with-annotation-selector, value: kwok.x-k8s.io/node=fake}
- name: kube-controller-manager
  extraArgs:
  # A local cluster's autoscalers act within seconds (15 s by default).
  - {key: horizontal-pod-autoscaler-sync-period, value: 5s}
- name: kube-apiserver
  extraArgs:
  - {key: kubelet-preferred-address-types, value: InternalIP}
  - {key: kubelet-client-certificate, value: $pki/admin.crt}
  - {key: kubelet-client-key, value: $pki/admin.key}
CONFIG
      config=(--config "$DEV_DIR/kwok-real-node.yaml")
      if [ -n "${METRICS_SERVER_BIN:-}" ]; then
        # HorizontalPodAutoscalers read the real node's containers' CPU
        # through it (kwok's nodes have none to report).
        # Its manifests: the module's kustomize base, which kwokctl builds
        # with kubectl kustomize (it would download a release's otherwise).
        cat >>"$DEV_DIR/kwok-real-node.yaml" <<CONFIG
---
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  kubectlBinary: $K8S_BIN/kubectl
  metricsServerManifests: [${METRICS_SERVER_MANIFESTS:?}]
CONFIG
        config+=(--enable metrics-server --metrics-server-binary "$METRICS_SERVER_BIN")
      fi
    fi
    if [ "${WEBHOOK_CLIENT_CERT:-}" = 1 ]; then
      # The API server presents a client certificate to every admission
      # webhook (its admission configuration's kubeconfig, user '*'), which
      # an operator run with --webhook-client-ca-path=$DEV_DIR/webhook-client/ca.crt
      # requires (docs/security.md, "Who may call the webhooks").
      wc=$DEV_DIR/webhook-client
      mkdir -p "$wc"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=webhook-client-ca \
        -keyout "$wc/ca.key" -out "$wc/ca.crt" 2>/dev/null
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=kube-apiserver \
        -keyout "$wc/client.key" -out "$wc/client.csr" 2>/dev/null
      printf 'extendedKeyUsage=clientAuth\n' >"$wc/client.ext"
      openssl x509 -req -in "$wc/client.csr" -CA "$wc/ca.crt" -CAkey "$wc/ca.key" -CAcreateserial -days 2 \
        -extfile "$wc/client.ext" -out "$wc/client.crt" 2>/dev/null
      cat >"$wc/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
users:
- name: '*'
  user:
    client-certificate: $wc/client.crt
    client-key: $wc/client.key
KUBECONFIG
      cat >"$wc/admission.yaml" <<ADMISSION
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $wc/kubeconfig
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $wc/kubeconfig
ADMISSION
      cat >"$DEV_DIR/kwok-webhook-client.yaml" <<CONFIG
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
componentsPatches:
- name: kube-apiserver
  extraArgs:
  - {key: admission-control-config-file, value: $wc/admission.yaml}
CONFIG
      config+=(--config "$DEV_DIR/kwok-webhook-client.yaml")
    fi
    "$kwokctl" create cluster "${config[@]}" --name "$DEV_CLUSTER" --runtime binary \
      --kubeconfig "$kubeconfig" \
      --kube-apiserver-binary "$K8S_BIN/kube-apiserver" \
      --kube-controller-manager-binary "$K8S_BIN/kube-controller-manager" \
      --kube-scheduler-binary "$K8S_BIN/kube-scheduler" \
      --etcd-binary "$K8S_BIN/etcd" \
      --kwok-controller-binary "$KWOK_BIN/kwok" \
      --disable-qps-limits --wait 2m "${feature_gates[@]}" \
      3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-  # the cluster's daemons must not inherit our descriptors (e.g. a flock)
    "$kwokctl" get kubeconfig --name "$DEV_CLUSTER" > "$kubeconfig.tmp"
    mv "$kubeconfig.tmp" "$kubeconfig"
  fi
  for i in 0 1 2; do
    "$kubectl" --kubeconfig "$kubeconfig" apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    topology.kubernetes.io/zone: zone-$i
spec: {}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "1000"}
  capacity: {cpu: "32", memory: 256Gi, pods: "1000"}
NODE
  done
  "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=60s >/dev/null
  nodes="3 fake nodes"
  if [ "$REAL_NODE" = 1 ]; then
    real_node up
    nodes="3 fake nodes and a real one (sunstrider-node)"
  fi
  echo "Cluster $DEV_CLUSTER is up with $nodes. Use it with:"
  echo "  export KUBECONFIG=$kubeconfig"
}

down() {
  # make dev's operator, when it runs against this cluster.
  if [ -f "$DEV_DIR/manager.pid" ]; then
    kill "$(cat "$DEV_DIR/manager.pid")" 2>/dev/null || true
    rm -f "$DEV_DIR/manager.pid"
  fi
  # The real node, when this cluster holds it (as root only).
  if [ "$(id -u)" = 0 ] && [ "$(cat /run/sunstrider-node/owner 2>/dev/null)" = "$DEV_DIR" ]; then
    real_node down
  fi
  "$kwokctl" delete cluster --name "$DEV_CLUSTER" --kubeconfig "$kubeconfig" || true
  rm -f "$kubeconfig"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
