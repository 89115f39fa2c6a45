#!/usr/bin/env bash
# `make dev`: on the local cluster (hack/dev-cluster.sh), installs the CRDs and
# the webhook configurations pointing at https://localhost:9443, starts the
# operator as a local process (logs in bin/dev/manager.log), applies
# config/samples and the seed's funny-joe Pod, and says what to look at.
# Env: KUBECTL, KUSTOMIZE, MANAGER (binary), DEV_DIR, DEV_WEBHOOK_PORT
#      (default 9443), DEV_PROBE_PORT (default 8081): make test-node uses
#      others, so that it can run beside a suite that runs `make run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
: "${KUBECTL:?}" "${KUSTOMIZE:?}" "${MANAGER:?}"
DEV_DIR=${DEV_DIR:-$root/bin/dev}
WEBHOOK_PORT=${DEV_WEBHOOK_PORT:-9443}
PROBE_PORT=${DEV_PROBE_PORT:-8081}
export KUBECONFIG=$DEV_DIR/kubeconfig
k() { "$KUBECTL" "$@"; }

# Stop an operator left running by an earlier `make dev`.
if [ -f "$DEV_DIR/manager.pid" ]; then
  kill "$(cat "$DEV_DIR/manager.pid")" 2>/dev/null || true
  rm -f "$DEV_DIR/manager.pid"
fi

"$KUSTOMIZE" build config/dev | go run ./hack/devconfig -base "https://localhost:$WEBHOOK_PORT" > "$DEV_DIR/dev.yaml"
k apply --server-side --force-conflicts -f "$DEV_DIR/dev.yaml" >/dev/null
# kubectl wait gives up at once on a CRD whose status.conditions is still
# null, just after it was made: ask again, a minute at most.
for _ in $(seq 60); do
  k wait --for=condition=Established crd --all --timeout=60s >/dev/null 2>&1 && break
  sleep 1
done
k wait --for=condition=Established crd --all --timeout=60s >/dev/null

# As the Deployment's init container does: the OperatorConfiguration named
# default, created when absent (docs/configuration.md).
"$MANAGER" init-config

# The serving certificate comes from the cluster's Secret (the operator
# writes it here): one left by an earlier cluster would be served, with a CA
# this cluster does not trust, until the new one is written.
rm -rf "$DEV_DIR/certs"
mkdir -p "$DEV_DIR/certs"
nohup "$MANAGER" \
  --operator-namespace=sunstrider-operator-system \
  --webhook-extra-dns-names=localhost \
  --webhook-cert-path="$DEV_DIR/certs" \
  --webhook-port="$WEBHOOK_PORT" \
  --health-probe-bind-address=":$PROBE_PORT" \
  --metrics-bind-address=0 \
  > "$DEV_DIR/manager.log" 2>&1 &
echo $! > "$DEV_DIR/manager.pid"

echo "Waiting for the operator (webhooks served with its own certificate)..."
for _ in $(seq 1 120); do
  if curl -fsS http://localhost:$PROBE_PORT/readyz >/dev/null 2>&1; then break; fi
  if ! kill -0 "$(cat "$DEV_DIR/manager.pid")" 2>/dev/null; then
    echo "The operator exited; see $DEV_DIR/manager.log" >&2; tail -20 "$DEV_DIR/manager.log" >&2; exit 1
  fi
  sleep 0.5
done
curl -fsS http://localhost:$PROBE_PORT/readyz >/dev/null

k apply -k config/samples 2>&1 | grep -v "is deprecated" | grep -v "configured\|created\|unchanged" || true
k get pod funny-joe -n default >/dev/null 2>&1 || k apply -f - >/dev/null <<'POD'
apiVersion: v1
kind: Pod
metadata:
  name: funny-joe
  namespace: default
spec:
  containers:
  - name: nginx
    image: nginx
POD
k wait --for=condition=Ready application/nginx-sample --timeout=60s >/dev/null

# On the real node (hack/real-node.sh), when the cluster has one: an app
# whose container really runs, answering through its Service.
demo=""
if k get node sunstrider-node >/dev/null 2>&1; then
  k apply -f hack/dev-demo/hello.yaml >/dev/null
  k wait --for=condition=Ready application/hello --timeout=120s >/dev/null
  node_ip=$(k get node sunstrider-node -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
  url="http://$node_ip:30090/"
  cluster_url="http://$(k get application hello -o jsonpath='{.status.clusterIP}'):80/"
  for _ in $(seq 50); do curl -fsS "$url" >/dev/null 2>&1 && break; sleep 0.2; done
  echo "hello answers on the real node: curl $url -> $(curl -fsS "$url")"
  demo="
  kubectl get application hello -o wide; kubectl get pods -o wide -l apps.sunstrider.cn/application=hello
  curl $url    # the app's version, through its NodePort (ClusterIP: curl $cluster_url)"
fi

cat <<MSG

The operator runs locally (pid $(cat "$DEV_DIR/manager.pid"), logs: $DEV_DIR/manager.log)
against the local cluster, with the samples applied. Look at:

  export KUBECONFIG=$KUBECONFIG
  kubectl get applications,deployments,services     # nginx-sample Ready, nodePort 30080
  kubectl get mycustomresources                     # my-custom-resource-01 Healthy (funny-joe exists)
  kubectl get guestbooks; kubectl get pods -L webapp.my.domain/role
  kubectl get drinks,configmaps
  kubectl get drinks.v1alpha1.example.com -o yaml   # the same Drink, converted$demo

Stop the operator: kill \$(cat $DEV_DIR/manager.pid); remove the cluster (and the operator): make dev-cluster-down
MSG
