//go:build e2e

// Package e2e runs the operator against a whole local cluster (kwokctl's
// binary runtime: real kube-apiserver, kube-controller-manager, scheduler;
// kwok runs the Pods). `make test-e2e` starts the cluster and runs it.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

const (
	operatorNamespace = "sunstrider-operator-system"
	serviceAccount    = "sunstrider-operator-controller-manager"
	// The locally running operator's ports, apart from `make dev`'s.
	webhookPort = 19443
	probePort   = 18081
)

var (
	scheme    = runtime.NewScheme()
	root      string
	kubectl   string
	kustomize string
	helm      string
	manager   string
	workDir   string
	// webhookClientCA is the CA of the client certificate the cluster's
	// API server presents to admission webhooks (hack/dev-cluster.sh's
	// WEBHOOK_CLIENT_CERT), which the local operator requires.
	webhookClientCA string
	// admin talks to the cluster as its administrator.
	admin client.Client
	// operator is the locally running manager process.
	operator *exec.Cmd
	logFile  string
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
	utilruntime.Must(pocv1.AddToScheme(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	utilruntime.Must(examplev1alpha1.AddToScheme(scheme))
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
	tools := map[string]*string{"KUBECTL": &kubectl, "KUSTOMIZE": &kustomize, "HELM": &helm, "MANAGER": &manager,
		"WEBHOOK_CLIENT_CA": &webhookClientCA}
	if workDir, admin, err = testutil.LocalCluster("test-e2e", "sunstrider-e2e-", scheme, tools); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	stopOperator()
	return code
}

// sh runs a command with the suite's environment and returns its combined output.
func sh(t testing.TB, stdin []byte, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustSh is sh that fails the test on error.
func mustSh(t testing.TB, stdin []byte, name string, args ...string) string {
	t.Helper()
	out, err := sh(t, stdin, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// startOperator runs the manager as a local process with kubeconfig, serving
// webhooks on webhookPort, and waits until it is ready.
func startOperator(t *testing.T, kubeconfig string) {
	t.Helper()
	startOperatorWith(t, kubeconfig, operatorRun{
		namespace: operatorNamespace,
		certDir:   filepath.Join(workDir, "certs"),
		log:       filepath.Join(workDir, "manager.log"),
	})
}

// operatorRun says where a local operator runs: the namespace its
// Deployment would run in, its certificate directory, its log file, and
// optionally the file its init container would create the
// OperatorConfiguration from.
type operatorRun struct {
	namespace, certDir, log, initialConfiguration string
}

func startOperatorWith(t *testing.T, kubeconfig string, run operatorRun) {
	t.Helper()
	g := NewWithT(t)
	logFile = run.log
	f, err := os.Create(logFile)
	g.Expect(err).NotTo(HaveOccurred())
	// As the Deployment's init container does: the OperatorConfiguration
	// named default, created when absent, as the same user as the manager.
	initArgs := []string{"init-config", "--kubeconfig=" + kubeconfig}
	if run.initialConfiguration != "" {
		initArgs = append(initArgs, "--from-file="+run.initialConfiguration)
	}
	out, err := exec.Command(manager, initArgs...).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "manager init-config:\n%s", out)
	operator = exec.Command(manager,
		"--operator-namespace="+run.namespace,
		"--webhook-extra-dns-names=localhost",
		fmt.Sprintf("--webhook-port=%d", webhookPort),
		"--webhook-cert-path="+run.certDir,
		// Admission requests only from the API server (webhookauth).
		"--webhook-client-ca-path="+webhookClientCA,
		fmt.Sprintf("--health-probe-bind-address=:%d", probePort),
		// HTTPS, authenticated and authorized, with the webhook certificate,
		// valid for the metrics Service too, as deployed (metrics_test.go).
		fmt.Sprintf("--metrics-bind-address=:%d", metricsPort),
		"--metrics-cert-path="+run.certDir,
		"--leader-elect",
		"--leader-election-namespace="+run.namespace,
	)
	operator.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	operator.Stdout, operator.Stderr = f, f
	g.Expect(operator.Start()).To(Succeed())
	g.Eventually(func() error {
		if operator.ProcessState != nil {
			return StopTrying("the operator exited")
		}
		return testutil.Readyz(probePort)
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed(), "operator log:\n%s", operatorLog())
}

func stopOperator() {
	if operator == nil || operator.Process == nil || operator.ProcessState != nil {
		return
	}
	_ = operator.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = operator.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = operator.Process.Kill()
	}
}

func operatorLog() string {
	data, _ := os.ReadFile(logFile)
	lines := strings.Split(string(data), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	return strings.Join(lines, "\n")
}

// dumpOnFailure prints what a failing test needs: operator logs, events,
// and the objects involved.
func dumpOnFailure(t *testing.T, namespace string, kinds ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("operator log (tail):\n%s", operatorLog())
		out, _ := sh(t, nil, kubectl, "get", "events", "-n", namespace, "--sort-by=.lastTimestamp")
		t.Logf("events in %s:\n%s", namespace, out)
		for _, k := range kinds {
			out, _ := sh(t, nil, kubectl, "get", k, "-n", namespace, "-o", "yaml")
			t.Logf("%s in %s:\n%s", k, namespace, out)
		}
	})
}

// serverVersion is the cluster's Kubernetes version (e.g. v1.37.2), for
// helm's --kube-version.
func serverVersion(t testing.TB) string {
	t.Helper()
	var v struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	out := mustSh(t, nil, kubectl, "version", "-o", "json")
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ServerVersion.GitVersion == "" {
		t.Fatalf("kubectl version: %v\n%s", err, out)
	}
	return v.ServerVersion.GitVersion
}

func ctx() context.Context { return context.Background() }
