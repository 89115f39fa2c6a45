//go:build node

// Package node proves on real containers what the other suites can only
// show on kwok's simulated Pods: `make test-node` starts a local cluster
// with its real node (hack/real-node.sh: containerd, runc, a kubelet and
// kube-proxy), runs `make dev` on it (hack/dev.sh: the operator as a local
// process, the samples, the demo Application), then this suite. The
// workloads are the project's own test image (test/app, two versions, made
// by `make test-images` and imported into the node's runtime): they
// tolerate the real node's taint and ask for it, so their containers run,
// their probes are real and their Services route through kube-proxy.
package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

const (
	// realNode is the real node's name, label and taint (hack/real-node.sh).
	realNode = "sunstrider-node"
	realKey  = "sunstrider.cn/real-node"
	imageV1  = "sunstrider.local/testapp:v1"
	imageV2  = "sunstrider.local/testapp:v2"
	imageV3  = "sunstrider.local/testapp:v3"
	appPort  = 8080
)

var (
	scheme  = runtime.NewScheme()
	root    string
	kubectl string
	workDir string
	admin   client.Client
	// nodeIP is the real node's InternalIP, where NodePorts answer.
	nodeIP string
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
	utilruntime.Must(pocv1.AddToScheme(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if root, err = testutil.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tools := map[string]*string{"KUBECTL": &kubectl}
	if workDir, admin, err = testutil.LocalCluster("test-node", "sunstrider-node-", scheme, tools); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var node corev1.Node
	if err := admin.Get(context.Background(), client.ObjectKey{Name: realNode}, &node); err != nil {
		fmt.Fprintf(os.Stderr, "the cluster has no real node (run the suite with `make test-node`, as root): %v\n", err)
		return 1
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	if nodeIP == "" {
		fmt.Fprintf(os.Stderr, "node %s has no InternalIP\n", realNode)
		return 1
	}
	return m.Run()
}

func ctx() context.Context { return context.Background() }

// onRealNode makes a Pod spec land on the real node: it tolerates the
// node's taint and selects its label.
func onRealNode(spec *corev1.PodSpec) {
	spec.NodeSelector = map[string]string{realKey: "true"}
	spec.Tolerations = []corev1.Toleration{{
		Key: realKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
}

// appContainer is the test image's container (v1), its readiness probe on
// /readyz every second.
func appContainer(args ...string) corev1.Container {
	return corev1.Container{
		Name: "app", Image: imageV1, ImagePullPolicy: corev1.PullNever, Args: args,
		Ports: []corev1.ContainerPort{{ContainerPort: appPort}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/readyz", Port: intstrPort()}},
			PeriodSeconds: 1, FailureThreshold: 1,
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             new(true),
			AllowPrivilegeEscalation: new(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

// application is an Application of the test image on the real node with a
// ClusterIP Service on port 80.
func application(ns, name string, replicas int32, c corev1.Container) *sunappsv1.Application {
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	app.Spec.Deployment.Replicas = new(replicas)
	app.Spec.Deployment.Template.Spec.Containers = []corev1.Container{c}
	onRealNode(&app.Spec.Deployment.Template.Spec)
	app.Spec.Service.Ports = []corev1.ServicePort{{Port: 80, TargetPort: intstrPort()}}
	return app
}

// get answers the body of a GET of url, or an error for anything but 200.
// Every call is a new connection, as a new client's would be.
func get(url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(body)), nil
}

// post sends an empty POST to the test app at url.
func post(url string) error {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Post(url, "text/plain", nil)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return nil
}

// appPods are the running Pods of the Application name.
func appPods(g Gomega, ns, name string) []corev1.Pod {
	var pods corev1.PodList
	g.Expect(admin.List(ctx(), &pods, client.InNamespace(ns),
		client.MatchingLabels{"apps.sunstrider.cn/application": name})).To(Succeed())
	return pods.Items
}

// condition returns the Application's condition of type t, or an empty one.
func condition(app *sunappsv1.Application, t string) metav1.Condition {
	if c := meta.FindStatusCondition(app.Status.Conditions, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// namespace is a fresh namespace for one test, deleted after it.
func namespace(t *testing.T) string {
	t.Helper()
	ns := testutil.Namespace(t, admin)
	t.Cleanup(func() {
		_ = admin.Delete(ctx(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	return ns
}

// sh runs a command from the repository's root and returns its combined output.
func sh(name string, args ...string) (string, error) { return shWith("", nil, name, args...) }

// shIn is sh with stdin.
func shIn(stdin, name string, args ...string) (string, error) {
	return shWith(stdin, nil, name, args...)
}

// shEnv is sh with env added to the suite's environment.
func shEnv(env []string, name string, args ...string) (string, error) {
	return shWith("", env, name, args...)
}

func shWith(stdin string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// crictl runs crictl against the real node's runtime.
func crictl(args ...string) (string, error) {
	return sh(filepath.Join(root, "hack", "real-node.sh"), append([]string{"crictl"}, args...)...)
}

// dumpOnFailure prints what a failing test needs: the operator's log, the
// namespace's events, Pods and Applications.
func dumpOnFailure(t *testing.T, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, args := range [][]string{
			{"get", "events", "-n", ns, "--sort-by=.lastTimestamp"},
			{"get", "pods,deployments,applications", "-n", ns, "-o", "wide"},
			{"get", "applications", "-n", ns, "-o", "yaml"},
		} {
			out, _ := sh(kubectl, args...)
			t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
		}
		log, _ := os.ReadFile(filepath.Join(os.Getenv("DEV_DIR"), "manager.log"))
		lines := strings.Split(string(log), "\n")
		t.Logf("operator log (tail):\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
	})
}
