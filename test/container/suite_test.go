//go:build container

// Package container runs the shipped image as the Helm chart's Pod would run
// it, which no other suite does: they run the manager as a host process, and
// kwok marks the chart's Pods Ready without running them. It also builds
// the Dockerfile with podman (`make docker-build`) and checks it gives the
// files of `make image`.
//
// `make test-container` builds the image (`make image`) and runs this suite,
// which starts a local cluster of its own (hack/dev-cluster.sh, its own name
// and folder, so it runs beside test-e2e and test-chaos), loads the image
// archive into podman, renders dist/chart as a user installs it (the
// operator's own certificates, certManagement: self) and applies all of it
// but the Deployment. It then runs each replica of the rendered
// Deployment's Pod with podman and runc, from the rendered spec: the init
// container to completion first (it creates the OperatorConfiguration),
// then the manager, with the securityContext's user, group and fsGroup,
// read-only root filesystem (and no tmpfs podman would add), dropped
// capabilities, no-new-privileges and RuntimeDefault seccomp, the resource
// limits, env with the downward API's POD_NAMESPACE, every emptyDir as a
// tmpfs of its sizeLimit, ConfigMap and Secret volumes as read-only files
// with their modes and the fsGroup, and the kubelet's kube-api-access
// volume (a TokenRequest token of the chart's ServiceAccount, the cluster CA
// from kube-root-ca.crt, the namespace) with KUBERNETES_SERVICE_HOST/PORT,
// so the manager uses the in-cluster config. What it does not model (other
// volume kinds, envFrom, a shared emptyDir...) fails the suite, naming the
// field.
//
// Networking: each Pod is a container in a podman bridge network of its own
// (a Pod IP), as the chart's probe and metrics ports (8081, 8443) are fixed
// and would collide between two replicas on the host network. The kubelet's
// probes are made to the container's address. The manager reaches the API
// server (a host process listening on every address) at
// kubernetes.default.svc, a name in its certificate, mapped to the network's
// gateway (--add-host). The API server reaches the webhooks as in the e2e
// suite, where the manager is a host process: hack/devconfig's rewrite of
// every webhook and the Drink conversion from the Service to
// https://localhost:<port>, here the first replica's webhook port published
// on 127.0.0.1, with --webhook-extra-dns-names=localhost (the chart's
// extraArgs) so the operator's certificate is valid for that name. Only
// that replica serves the API server: a URL names one endpoint. The
// `helm test` hook's Pod, which has no port and only talks to the API
// server, runs in the host's network while the replicas run and in the
// suite's network once they have stopped (chartTestHook.run says why).
//
// It checks: both replicas' readiness and liveness probes, polled as a
// kubelet does (paths, ports, delays and periods from the spec), succeed
// and liveness never fails; the leader Lease is held by one of them; the
// seed's sample Application becomes Ready (kwok makes its Pods Ready); a
// Drink written as v1alpha1 reads as v1 (conversion by the container); the
// validating webhook refuses an invalid Application with its field message;
// the chart's `helm test` hook (rendered with the rest, its ServiceAccount,
// Role and RoleBinding applied as Helm creates them before its Job) runs
// its Job's Pod the same way, `manager check-release` as that
// ServiceAccount, and exits 0 with both probes refused as expected;
// `podman stop --time <terminationGracePeriodSeconds>` (SIGTERM) ends the
// leader with exit code 0 within the grace period and the other replica
// takes the Lease within seconds, then, once that one has injected the CA,
// ends it too, which leaves the Lease without a holder; the hook's Pod,
// run again with no replica (--timeout=1s), exits 1 naming the webhook the
// API server could not call.
// Containers, network, image and cluster are removed at the end, also on
// failure.
package container

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	"sunstrider.cn/operator/internal/testutil"
)

const (
	namespace = "sunstrider-operator-system"
	release   = "sunstrider-operator"
	leaseName = "sunstrider-operator.sunstrider.cn"
	// apiHost is what KUBERNETES_SERVICE_HOST says: a name the API server's
	// certificate holds, which each container's /etc/hosts maps to the
	// network's gateway.
	apiHost = "kubernetes.default.svc"
)

var (
	scheme = runtime.NewScheme()
	root   string
	// The tools, from the environment make sets (PODMAN: from PATH).
	kubectl, helm, podman, archive, k8sBin, kwokBin string
	workDir, clusterName, kubeconfig                string
	admin                                           client.Client
	// apiServerFromNetwork is the gateway of the suite's podman network: the
	// host, where the API server listens.
	apiServerFromNetwork string
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	utilruntime.Must(examplev1alpha1.AddToScheme(scheme))
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
}

// replica is one running Pod of the Deployment.
type replica struct {
	pod     *podRun
	manager string // the manager container's name
	prober  *prober
}

func TestChartPodRunsInContainers(t *testing.T) {
	began := time.Now()
	setUp(t)
	image := loadImage(t)
	deployment, testHook := installChartButDeployment(t, image)

	replicas := int(ptrOr(deployment.Spec.Replicas, 1))
	if replicas < 2 {
		t.Fatalf("the chart renders %d replica(s): the suite checks failover between two", replicas)
	}
	spec := deployment.Spec.Template.Spec
	var manager corev1.Container
	for _, c := range spec.Containers {
		if c.Name == deployment.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"] {
			manager = c
		}
	}
	if manager.Name == "" || len(spec.Containers) != 1 {
		t.Fatalf("expected one container, the default-container (manager): %d containers", len(spec.Containers))
	}
	webhookPort := int32(0)
	for _, p := range manager.Ports {
		if p.Name == "webhook-server" {
			webhookPort = p.ContainerPort
		}
	}
	if webhookPort == 0 {
		t.Fatal("the manager container has no port named webhook-server")
	}

	pods := make([]*replica, 0, replicas)
	for i := range replicas {
		pod := &podRun{
			name:      fmt.Sprintf("%s-%d", deployment.Name, i),
			namespace: namespace,
			spec:      spec,
			image:     image,
			network:   clusterName,
			apiHost:   apiHost,
			apiPort:   apiServerPort(t),
			dir:       filepath.Join(workDir, "pods", fmt.Sprintf("%d", i)),
		}
		if i == 0 {
			pod.publish = map[int32]int{webhookPort: webhookHostPort}
		}
		for _, c := range spec.InitContainers {
			pod.runInit(t, c)
		}
		if i == 0 {
			// The init container created the OperatorConfiguration; the
			// next replica's finds it and leaves it alone.
			config := &configv1alpha1.OperatorConfiguration{}
			if err := admin.Get(ctx(), client.ObjectKey{Name: "default"}, config); err != nil {
				t.Fatalf("the init container made no OperatorConfiguration default: %v", err)
			}
		}
		ip := pod.start(t, manager)
		if i == 0 {
			pinBridgeAddress(t, clusterName)
		}
		pods = append(pods, &replica{pod: pod, manager: containerName(pod.name, manager.Name),
			prober: startProber(t, manager, ip)})
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range pods {
				out, _ := podmanCmd("logs", "--tail", "80", r.manager)
				t.Logf("%s (last 80 lines):\n%s", r.manager, indent(out))
			}
			out, _ := runCmd(kubectl, "get", "events", "-A", "--sort-by=.lastTimestamp")
			t.Logf("events:\n%s", indent(out))
		}
	})
	g := NewWithT(t)

	// Readiness as a kubelet polls it (the chart's 5 s delay, 10 s period);
	// a container that exits ends the wait.
	g.Eventually(func(g Gomega) {
		for _, r := range pods {
			g.Expect(running(r.manager)).To(BeTrue(), "%s exited:\n%s", r.manager, logs(r.manager))
			ready, _, died, last := r.prober.state()
			if died != "" {
				g.Expect(died).To(BeEmpty(), "%s liveness", r.manager)
			}
			g.Expect(ready).To(BeTrue(), "%s readiness (last: %s)", r.manager, last)
		}
	}).Should(Succeed(), "both replicas ready")
	t.Logf("both replicas ready after %s", time.Since(began).Round(time.Second))
	// Liveness: the chart's first probe comes 15 s after the start.
	g.Eventually(func(g Gomega) {
		for _, r := range pods {
			g.Expect(running(r.manager)).To(BeTrue(), "%s exited:\n%s", r.manager, logs(r.manager))
			_, lives, died, _ := r.prober.state()
			g.Expect(died).To(BeEmpty(), "%s: the kubelet would have restarted it", r.manager)
			g.Expect(lives).To(BeNumerically(">", 0), "%s answered a liveness probe", r.manager)
		}
	}).Should(Succeed(), "both replicas alive")
	t.Logf("both replicas alive after %s", time.Since(began).Round(time.Second))

	// The leader Lease, in the namespace the ServiceAccount volume names.
	leader := func(g Gomega) string {
		lease := &coordinationv1.Lease{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: namespace, Name: leaseName}, lease)).To(Succeed())
		return ptrOr(lease.Spec.HolderIdentity, "")
	}
	holderOf := func(identity string) *replica {
		for _, r := range pods {
			if strings.HasPrefix(identity, r.pod.name+"_") {
				return r
			}
		}
		return nil
	}
	var first *replica
	g.Eventually(func(g Gomega) {
		first = holderOf(leader(g))
		g.Expect(first).NotTo(BeNil(), "the Lease is held by a replica")
	}).Should(Succeed())
	t.Logf("leader: %s", first.pod.name)

	t.Run("SampleApplicationBecomesReady", func(t *testing.T) {
		g := NewWithT(t)
		mustRun(t, kubectl, "apply", "-f", filepath.Join(root, "config/samples/apps_v1_application.yaml"))
		key := client.ObjectKey{Namespace: "default", Name: "nginx-sample"}
		g.Eventually(func(g Gomega) {
			app := &sunappsv1.Application{}
			g.Expect(admin.Get(ctx(), key, app)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)).To(BeTrue(),
				"%+v", app.Status.Conditions)
			g.Expect(app.Status.Workflow.AvailableReplicas).To(Equal(int32(1)))
		}).Should(Succeed())
	})

	t.Run("DrinkWrittenAsV1alpha1ReadsAsV1", func(t *testing.T) {
		g := NewWithT(t)
		sample := filepath.Join(root, "config/samples/example_v1alpha1_drink.yaml")
		alpha := &examplev1alpha1.Drink{}
		data, err := os.ReadFile(sample)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(yaml.Unmarshal(data, alpha)).To(Succeed())
		drink, name, ok := strings.Cut(alpha.Spec.Order, " for ")
		g.Expect(ok).To(BeTrue(), "%s: order %q is not \"<drink> for <name>\"", sample, alpha.Spec.Order)
		mustRun(t, kubectl, "apply", "-n", "default", "-f", sample)
		v1 := &examplev1.Drink{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: alpha.Name}, v1)).To(Succeed())
		g.Expect(v1.Spec).To(Equal(examplev1.DrinkSpec{Drink: drink, Name: name}))
	})

	t.Run("WebhookRefusesInvalidApplication", func(t *testing.T) {
		g := NewWithT(t)
		out, err := runCmdIn([]byte(`apiVersion: apps.sunstrider.cn/v1
kind: Application
metadata: {name: mislabelled, namespace: default}
spec:
  deployment:
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: other}}
      spec: {containers: [{name: web, image: nginx}]}
`), kubectl, "apply", "-f", "-")
		// The rule is the validating webhook's alone (no CEL rule of the
		// CRD says it), and the webhook answers with the field's error as
		// its status, which the API server passes on as it is.
		g.Expect(err).To(HaveOccurred(), "an Application whose selector misses its template:\n%s", out)
		g.Expect(out).To(ContainSubstring(`The Application "mislabelled" is invalid: ` +
			"spec.deployment.template.metadata.labels: Invalid value: " +
			`{"app":"other"}: ` + "`selector` does not match template `labels`"))
	})

	// `helm test`: the hook's Pod, as rendered, with its ServiceAccount,
	// Role and RoleBinding, against the running replicas.
	t.Run("HelmTestHookPasses", func(t *testing.T) {
		g := NewWithT(t)
		testHook.install(t)
		out, code := testHook.run(t, testHook.job.Name+"-passes", "host", image)
		g.Expect(code).To(Equal(0), "the helm test Pod's exit code:\n%s", indent(out))
		g.Expect(strings.Count(out, `"msg":"Webhook refused the probe as expected"`)).To(Equal(2), out)
		g.Expect(out).To(And(
			ContainSubstring(`"webhook":"vapplication-v1.sunstrider.cn"`),
			ContainSubstring(`"webhook":"vdrink-v1.example.com"`),
			ContainSubstring(`"msg":"Release check passed`)), out)
		t.Logf("helm test Pod exited 0:\n%s", indent(out))
	})

	t.Run("SIGTERMExitsZeroAndHandsOverTheLease", func(t *testing.T) {
		g := NewWithT(t)
		grace := ptrOr(spec.TerminationGracePeriodSeconds, 30)
		stop := func(r *replica) {
			t.Helper()
			r.prober.cancel()
			start := time.Now()
			mustPodman(t, "stop", "--time", strconv.FormatInt(grace, 10), r.manager)
			took := time.Since(start)
			code := strings.TrimSpace(mustPodman(t, "inspect", "--format", "{{.State.ExitCode}}", r.manager))
			g.Expect(code).To(Equal("0"), "%s exit code after SIGTERM (stopped in %s):\n%s",
				r.manager, took.Round(time.Millisecond), logs(r.manager))
			g.Expect(took).To(BeNumerically("<", time.Duration(grace)*time.Second),
				"%s ended within terminationGracePeriodSeconds", r.manager)
			t.Logf("%s stopped in %s, exit code 0", r.manager, took.Round(time.Millisecond))
			if took > time.Duration(grace)*time.Second/3 {
				t.Logf("%s took a third of its grace period or more to stop; its last lines:\n%s", r.manager, logs(r.manager))
			}
		}
		for _, r := range pods {
			_, _, died, _ := r.prober.state()
			g.Expect(died).To(BeEmpty(), "%s: the kubelet would have restarted it", r.manager)
		}
		stop(first)
		var second *replica
		for _, r := range pods {
			if r != first {
				second = r
			}
		}
		g.Eventually(func(g Gomega) {
			g.Expect(holderOf(leader(g))).To(Equal(second))
		}, 10*time.Second).Should(Succeed(), "%s takes over the Lease", second.pod.name)
		// The new leader is stopped once it has settled: its CA injection
		// done (internal/certs logs "CA injected"). With the certificate
		// rotator of earlier versions (cert-controller, which reconciled
		// with context.Background(), open-policy-agent/cert-controller#42)
		// a SIGTERM within about a second of the takeover was seen to hang
		// the shutdown past the grace period; this suite checks the
		// settled leader.
		g.Eventually(func() string {
			out, _ := podmanCmd("logs", second.manager)
			_, after, _ := strings.Cut(out, `"msg":"Successfully acquired lease"`)
			return after
		}, 30*time.Second).Should(ContainSubstring(`"msg":"CA injected"`),
			"%s, the new leader, injected the CA", second.pod.name)
		stop(second)
		g.Eventually(leader, 5*time.Second).Should(BeEmpty(), "the last leader releases the Lease")
	})
	// The same Pod once no replica runs (the previous subtest stopped
	// them): the API server cannot call the mutating webhook, and the
	// check fails when its timeout (shortened here) ends, saying so.
	t.Run("HelmTestHookFailsOnceTheReplicasStopped", func(t *testing.T) {
		g := NewWithT(t)
		for _, r := range pods {
			if running(r.manager) {
				mustPodman(t, "stop", "--time", "0", r.manager)
			}
		}
		out, code := testHook.run(t, testHook.job.Name+"-fails", clusterName, image, "--timeout=1s")
		g.Expect(code).To(Equal(1), "the helm test Pod's exit code with no replica:\n%s", indent(out))
		g.Expect(out).To(And(
			ContainSubstring(`"msg":"Release check failed"`),
			ContainSubstring("still no answer from the webhooks after 1s"),
			ContainSubstring(`Application mutating and validating webhooks: dry-run create of Application `+
				namespace+"/sunstrider-release-check"),
			ContainSubstring(`failed calling webhook \"mapplication-v1.sunstrider.cn\"`)), out)
		t.Logf("helm test Pod exited 1:\n%s", indent(out))
	})
	t.Logf("FIGURES: container suite %s", time.Since(began).Round(time.Second))
}

// setUp reads the tools from the environment, starts the suite's cluster
// (removed at the end) and its podman network.
func setUp(t *testing.T) {
	t.Helper()
	var err error
	if root, err = testutil.RepoRoot(); err != nil {
		t.Fatal(err)
	}
	const how = "run the suite with `make test-container`"
	for name, dst := range map[string]*string{"KUBECTL": &kubectl, "HELM": &helm, "IMAGE_ARCHIVE": &archive,
		"K8S_BIN": &k8sBin, "KWOK_BIN": &kwokBin, "CONTAINER_DIR": &workDir} {
		if *dst = os.Getenv(name); *dst == "" {
			t.Fatalf("%s is not set: %s", name, how)
		}
	}
	for _, f := range []string{kubectl, helm, archive, k8sBin, kwokBin} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: %s", err, how)
		}
	}
	install := "install podman and runc (Debian/Ubuntu: apt-get install -y podman runc)"
	if podman, err = exec.LookPath(envOr("PODMAN", "podman")); err != nil {
		t.Fatalf("podman: %v: %s", err, install)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		t.Fatalf("runc: %v: %s", err, install)
	}
	if os.Geteuid() != 0 {
		// Rootless podman keeps its networks in a namespace of its own: the
		// host could not probe the containers' addresses, nor they reach
		// the API server at the network's gateway.
		t.Fatal("run the suite as root (sudo make test-container): rootless podman is not supported")
	}
	clusterName = envOr("CONTAINER_CLUSTER", "sunstrider-container")
	kubeconfig = filepath.Join(workDir, "kubeconfig")
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The Pods' files: tokens, ConfigMap and Secret volumes.
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(workDir, "pods")) })

	cluster := func(action string) (string, error) {
		cmd := exec.Command(filepath.Join(root, "hack/dev-cluster.sh"), action)
		cmd.Env = append(os.Environ(), "K8S_BIN="+k8sBin, "KWOK_BIN="+kwokBin,
			"DEV_DIR="+workDir, "DEV_CLUSTER="+clusterName)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	_, _ = cluster("down")
	t.Cleanup(func() {
		if out, err := cluster("down"); err != nil {
			t.Errorf("removing cluster %s: %v\n%s", clusterName, err, out)
		}
	})
	if out, err := cluster("up"); err != nil {
		t.Fatalf("starting cluster %s: %v\n%s", clusterName, err, out)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)

	// A network of the suite's own: the Pods' IPs, and a gateway to the host.
	removeNetwork := func() {
		for name := range strings.FieldsSeq(mustPodman(t, "ps", "--all", "--quiet",
			"--filter", "label=sunstrider.cn/container-suite="+clusterName)) {
			removeContainer(name)
		}
		_, _ = podmanCmd("network", "rm", "--force", clusterName)
	}
	removeNetwork() // a previous run's, killed before its cleanup
	mustPodman(t, "network", "create", clusterName)
	t.Cleanup(removeNetwork)
	apiServerFromNetwork = strings.TrimSpace(mustPodman(t, "network", "inspect", "--format",
		"{{range .Subnets}}{{.Gateway}}{{end}}", clusterName))
	if net.ParseIP(apiServerFromNetwork) == nil {
		t.Fatalf("network %s has no gateway: %q", clusterName, apiServerFromNetwork)
	}
}

// pinBridgeAddress sets the MAC address of network's bridge to the one it
// has, which keeps it: a Linux bridge whose address was never set takes the
// lowest of its ports' and changes when that port leaves. The replicas
// reach the API server at the bridge's address (the gateway), so when the
// first replica stopped, the other's ARP entry named a MAC no longer there
// and its requests went nowhere until the entry was refreshed: its Lease
// reads timed out and it did not take over within 10 s (two CI rehearsals
// of 2026-12-04, one with the suite alone). netavark sets a fixed address
// itself from 1.9 (containers/netavark#833); Debian's is older. The bridge
// exists once a container of the network runs: call it then, before any
// other container joins or leaves.
func pinBridgeAddress(t *testing.T, network string) {
	t.Helper()
	bridge := strings.TrimSpace(mustPodman(t, "network", "inspect", "--format", "{{.NetworkInterface}}", network))
	sys := filepath.Join("/sys/class/net", bridge)
	mac, err := os.ReadFile(filepath.Join(sys, "address"))
	if bridge == "" || err != nil {
		t.Fatalf("network %s: no bridge %q (%v)", network, bridge, err)
	}
	mustRun(t, "ip", "link", "set", "dev", bridge, "address", strings.TrimSpace(string(mac)))
	// 3: NET_ADDR_SET (include/linux/netdevice.h), the address was set.
	kind, err := os.ReadFile(filepath.Join(sys, "addr_assign_type"))
	if err != nil || strings.TrimSpace(string(kind)) != "3" {
		t.Fatalf("bridge %s: address not pinned (addr_assign_type %q, %v)", bridge, kind, err)
	}
}

// loadImage loads the image archive into podman (removed at the end) and
// returns its name.
func loadImage(t *testing.T) string {
	t.Helper()
	out := mustPodman(t, "load", "--input", archive)
	var image string
	for line := range strings.SplitSeq(out, "\n") {
		if _, name, ok := strings.Cut(line, "Loaded image: "); ok {
			image = strings.TrimSpace(name)
		}
	}
	if image == "" {
		t.Fatalf("podman load -i %s named no image:\n%s", archive, out)
	}
	t.Cleanup(func() { _, _ = podmanCmd("rmi", "--force", image) })
	t.Logf("loaded %s from %s", image, archive)
	return image
}

// webhookHostPort is where the first replica's webhook server is published
// on 127.0.0.1 for the API server: a free port, so the suite runs beside
// the others.
var webhookHostPort int

// installChartButDeployment renders dist/chart as a user installs it with
// the operator's own certificates, the image loaded, and the webhook
// certificate valid for localhost; it applies every object but the
// Deployment and the `helm test` hook, with the webhooks pointed at the
// published webhook port, and returns the Deployment and the hook.
func installChartButDeployment(t *testing.T, image string) (*appsv1.Deployment, *chartTestHook) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	webhookHostPort = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	slash := strings.LastIndex(image, "/")
	colon := strings.LastIndex(image, ":")
	if colon < slash {
		t.Fatalf("image %s has no tag", image)
	}
	var versions struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := yaml.Unmarshal([]byte(mustRun(t, kubectl, "version", "-o", "json")), &versions); err != nil {
		t.Fatal(err)
	}
	version := versions.ServerVersion.GitVersion
	rendered := mustRun(t, helm, "template", release, filepath.Join(root, "dist/chart"),
		"--namespace", namespace, "--kube-version", version,
		"--set", "image.repository="+image[:colon]+",image.tag="+image[colon+1:],
		"--set-json", `extraArgs=["--webhook-extra-dns-names=localhost"]`)

	var deployment *appsv1.Deployment
	testHook := &chartTestHook{}
	var rest bytes.Buffer
	base := fmt.Sprintf("https://localhost:%d", webhookHostPort)
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(rendered)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatal(err)
		}
		if obj.Object == nil {
			continue
		}
		if _, ok := obj.GetAnnotations()[hookAnnotation]; ok {
			testHook.add(t, obj, doc)
			continue
		}
		if obj.GetKind() == "Deployment" {
			if deployment != nil {
				t.Fatal("the chart renders more than one Deployment")
			}
			deployment = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict(doc, deployment); err != nil {
				t.Fatalf("the rendered Deployment: %v", err)
			}
			continue
		}
		toURLs(t, obj, base)
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&rest, "---\n%s", data)
	}
	if deployment == nil {
		t.Fatal("the chart renders no Deployment")
	}
	testHook.check(t)
	// The namespace, labelled as the chart's values.yaml tells users.
	mustRun(t, kubectl, "create", "namespace", namespace)
	mustRun(t, kubectl, "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted",
		"pod-security.kubernetes.io/enforce-version=latest")
	mustRunIn(t, rest.Bytes(), kubectl, "apply", "--server-side", "-f", "-")
	// kubectl wait gives up at once, rather than waiting, on a CRD whose
	// status.conditions is still null just after it was made ("accessor
	// error: <nil> is of the type <nil>"): ask again until it waits.
	NewWithT(t).Eventually(func() error {
		_, err := runCmdIn(nil, kubectl, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
		return err
	}, time.Minute, time.Second).Should(Succeed())
	// The Deployment itself passes the API server's validation.
	deploymentYAML, err := yaml.Marshal(deployment)
	if err != nil {
		t.Fatal(err)
	}
	mustRunIn(t, deploymentYAML, kubectl, "apply", "--server-side", "--dry-run=server", "-f", "-")
	// kube-root-ca.crt, which the kubelet mounts, is published by the
	// controller-manager shortly after the namespace appears.
	NewWithT(t).Eventually(func() error {
		return admin.Get(ctx(), client.ObjectKey{Namespace: namespace, Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})
	}).Should(Succeed())
	return deployment, testHook
}

// toURLs points the webhooks of a webhook configuration, and a CRD's
// conversion webhook, at base instead of their Service (as hack/devconfig).
func toURLs(t *testing.T, obj *unstructured.Unstructured, base string) {
	t.Helper()
	redirect := func(cc map[string]any) {
		svc, ok := cc["service"].(map[string]any)
		if !ok {
			return
		}
		path, _ := svc["path"].(string)
		delete(cc, "service")
		cc["url"] = base + path
	}
	switch obj.GetKind() {
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, h := range hooks {
			if cc, ok := h.(map[string]any)["clientConfig"].(map[string]any); ok {
				redirect(cc)
			}
		}
		if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
			t.Fatal(err)
		}
	case "CustomResourceDefinition":
		cc, found, _ := unstructured.NestedMap(obj.Object, "spec", "conversion", "webhook", "clientConfig")
		if found {
			redirect(cc)
			if err := unstructured.SetNestedMap(obj.Object, cc, "spec", "conversion", "webhook", "clientConfig"); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// apiServerPort is the port of the API server in the suite's kubeconfig.
func apiServerPort(t *testing.T) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	server := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster].Server
	_, port, err := net.SplitHostPort(strings.TrimPrefix(server, "https://"))
	if err != nil {
		t.Fatalf("API server %s: %v", server, err)
	}
	return port
}

func running(name string) bool {
	out, err := podmanCmd("inspect", "--format", "{{.State.Running}}", name)
	return err == nil && strings.TrimSpace(out) == "true"
}

func logs(name string) string {
	out, _ := podmanCmd("logs", "--tail", "40", name)
	return indent(out)
}

func runCmd(name string, args ...string) (string, error) { return runCmdIn(nil, name, args...) }

func runCmdIn(stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig,
		"HELM_CACHE_HOME="+filepath.Join(workDir, "helm/cache"),
		"HELM_CONFIG_HOME="+filepath.Join(workDir, "helm/config"),
		"HELM_DATA_HOME="+filepath.Join(workDir, "helm/data"))
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	return mustRunIn(t, nil, name, args...)
}

func mustRunIn(t *testing.T, stdin []byte, name string, args ...string) string {
	t.Helper()
	out, err := runCmdIn(stdin, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
