//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// The ports `make run` serves on (its defaults: the Makefile's
// RUN_WEBHOOK_PORT, which `make install` writes into the Drink CRD, and the
// manager's probe port), apart from the suite's operator (19443, 18081).
const (
	runWebhookPort = 9443
	runProbePort   = 8081
)

// The CRDs `make install` installs, and what `make deploy`, `make dev` or
// `make run` could leave behind besides.
var (
	quickStartCRDs = []string{
		"applications.apps.sunstrider.cn", "mycustomresources.poc.test.domain",
		"guestbooks.webapp.my.domain", "drinks.example.com",
	}
	webhookConfigurations = []client.Object{
		&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
			"metadata": map[string]any{"name": "sunstrider-operator-mutating-webhook-configuration"},
		}},
		&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
			"metadata": map[string]any{"name": "sunstrider-operator-validating-webhook-configuration"},
		}},
	}
)

func init() {
	utilruntime.Must(examplev1beta1.AddToScheme(scheme))
}

// TestQuickStart is seed 002's quick start as a user types it on a bare
// cluster: `make install`, `make run`, `kubectl apply -k config/samples`;
// every kind is reconciled, every Drink version read, listed and written
// (through the conversion webhook `make run` serves); then the operator is
// stopped, and `make uninstall` leaves nothing behind.
//
// Its place in the suite: it needs a cluster without the operator and ends
// by uninstalling the CRDs, while the other tests build on one deployment of
// the operator, test after test. Go runs test files in name order, so this
// one runs after e2e_test.go, malformed_test.go and metrics_test.go: it
// stops the suite's operator, takes the cluster back to bare (`kubectl
// delete` of config/default, which also removes config/dev's objects of the
// same names) and leaves it bare. It fails at once if a test file sorting
// after it holds tests, which would find no operator. It serves on `make
// run`'s ports (9443, 8081), distinct from the suite's operator, and fails
// at once if something else holds them (a `make dev` of the same machine).
func TestQuickStart(t *testing.T) {
	g := NewWithT(t)
	g.Expect(testsAfter("quickstart_test.go")).To(BeEmpty(),
		"test files sorting after quickstart_test.go run on a cluster it left bare: rename them to sort before it")
	runLog := filepath.Join(workDir, "make-run.log")
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(runLog)
			t.Logf("make run log:\n%s", tail(string(data), 80))
		}
	})

	stopOperator()
	if out, err := sh(t, []byte(mustSh(t, nil, kustomize, "build", "config/default")),
		kubectl, "delete", "--ignore-not-found", "--wait", "--timeout=120s", "-f", "-"); err != nil {
		t.Fatalf("taking the cluster back to bare: %v\n%s", err, out)
	}
	g.Eventually(leftBehind).Should(BeEmpty(), "a bare cluster to start from")
	for _, port := range []int{runWebhookPort, runProbePort} {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
		g.Expect(err).NotTo(HaveOccurred(), "port %d, which make run serves on, is in use (a make dev running?)", port)
		_ = l.Close()
	}

	// The quick start, as typed.
	t.Log(mustMake(t, "install"))
	stopRun := makeRun(t, runLog)
	defer stopRun()
	g.Eventually(func() error { return testutil.Readyz(runProbePort) }, 5*time.Minute).Should(Succeed(),
		"make run ready (it builds the operator first)")
	startLog, err := os.ReadFile(runLog)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(string(startLog), "Admission webhooks are not registered in the cluster")).To(Equal(1),
		"one log line says what make install does not register")
	// So nothing checks a requester's rights at admission, and the
	// OperatorConfiguration says so rather than claim a check.
	g.Eventually(func(g Gomega) {
		cfg := &configv1alpha1.OperatorConfiguration{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Name: configv1alpha1.ConfigurationName}, cfg)).To(Succeed())
		g.Expect(cfg.Status.Effective.ChildAccess).To(Equal(configv1alpha1.ChildAccessUnenforced))
		c := meta.FindStatusCondition(cfg.Status.Conditions, configv1alpha1.ConditionAccessChecks)
		g.Expect(c).NotTo(BeNil(), "the AccessChecks condition")
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(configv1alpha1.ReasonUnenforced))
		g.Expect(c.Message).To(ContainSubstring("no ValidatingWebhookConfiguration registers"))
	}).Should(Succeed(), "make run reports that no access check runs")
	mustSh(t, nil, kubectl, "apply", "-k", "config/samples")

	t.Run("every kind is reconciled", func(t *testing.T) {
		g := NewWithT(t)
		myCustomResource := pocv1.GroupVersion.WithKind("MyCustomResource")
		for _, obj := range []struct {
			gvk             schema.GroupVersionKind
			namespace, name string
		}{
			{sunappsv1.GroupVersion.WithKind("Application"), "default", "nginx-sample"},
			{myCustomResource, "default", "my-custom-resource-01"},
			{myCustomResource, "default", "my-custom-resource-02"},
			{webappv1.GroupVersion.WithKind("Guestbook"), "", "guestbook-sample"},
			{examplev1.GroupVersion.WithKind("Drink"), "default", "example-drink"},
			{examplev1.GroupVersion.WithKind("Drink"), "default", "example-drink-v1alpha1"},
			{examplev1.GroupVersion.WithKind("Drink"), "default", "example-drink-v1beta1"},
		} {
			g.Eventually(func(g Gomega) {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(obj.gvk)
				g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: obj.namespace, Name: obj.name}, u)).To(Succeed())
				observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
				g.Expect(observed).To(Equal(u.GetGeneration()), "status.observedGeneration")
				conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				g.Expect(conditions).To(ContainElement(HaveKeyWithValue("type", "Ready")))
			}).Should(Succeed(), "%s %s reconciled", obj.gvk.Kind, obj.name)
		}
		g.Eventually(func(g Gomega) {
			app := &sunappsv1.Application{}
			g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "nginx-sample"}, app)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)).To(BeTrue())
		}).Should(Succeed(), "nginx-sample Ready")
	})

	t.Run("every Drink version is read, listed and written", func(t *testing.T) {
		g := NewWithT(t)
		// The samples, one per version, each read in every version.
		for _, name := range []string{"example-drink", "example-drink-v1alpha1", "example-drink-v1beta1"} {
			key := client.ObjectKey{Namespace: "default", Name: name}
			alpha, beta, hub := &examplev1alpha1.Drink{}, &examplev1beta1.Drink{}, &examplev1.Drink{}
			g.Expect(admin.Get(ctx(), key, alpha)).To(Succeed(), "%s as v1alpha1", name)
			g.Expect(admin.Get(ctx(), key, beta)).To(Succeed(), "%s as v1beta1", name)
			g.Expect(admin.Get(ctx(), key, hub)).To(Succeed(), "%s as v1", name)
			g.Expect(alpha.Spec.Order).To(Equal(examplev1alpha1.FormatOrder(hub.Spec.Drink, hub.Spec.Name)), name)
			g.Expect(beta.Spec.Name).To(Equal(hub.Spec.Name), name)
			g.Expect(beta.Spec.Drink.Kind).To(Equal(hub.Spec.Drink), name)
		}
		hub := &examplev1.Drink{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "example-drink-v1alpha1"}, hub)).To(Succeed())
		g.Expect(hub.Spec.Name).To(Equal("my-drink"))
		g.Expect(hub.Spec.Drink).To(Equal("coffee"))

		// Listed in every version, as kubectl users do (the old ones with a
		// deprecation warning).
		for _, version := range []string{"v1alpha1", "v1beta1", "v1"} {
			out := mustSh(t, nil, kubectl, "get", "drinks."+version+".example.com", "-n", "default", "-o", "name")
			g.Expect(strings.Count(out, "drink.example.com/")).To(Equal(3), "drinks listed as %s:\n%s", version, out)
		}
		alphas := &examplev1alpha1.DrinkList{}
		g.Expect(admin.List(ctx(), alphas, client.InNamespace("default"))).To(Succeed())
		g.Expect(alphas.Items).To(HaveLen(3))
		for _, d := range alphas.Items {
			g.Expect(d.Spec.Order).NotTo(BeEmpty(), "%s listed as v1alpha1", d.Name)
		}

		// Written in an old version: the operator acts on it.
		key := client.ObjectKey{Namespace: "default", Name: "example-drink"}
		beta := &examplev1beta1.Drink{}
		g.Expect(admin.Get(ctx(), key, beta)).To(Succeed())
		beta.Spec.Drink.Kind = "tea"
		g.Expect(admin.Update(ctx(), beta)).To(Succeed())
		g.Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(admin.Get(ctx(), key, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("drink", "tea"))
			g.Expect(admin.Get(ctx(), key, hub)).To(Succeed())
			g.Expect(hub.Spec.Drink).To(Equal("tea"))
		}).Should(Succeed(), "the Drink written as v1beta1 reaches its ConfigMap")
	})

	// The user stops the operator (Ctrl-C) and uninstalls.
	stopRun()
	t.Log(mustMake(t, "uninstall"))
	g.Eventually(leftBehind).Should(BeEmpty(), "make uninstall leaves nothing behind")
	// Checked once, not eventually: make uninstall deletes the objects in the
	// foreground before their CRDs, so their children are gone when it
	// returns. (Deleting the CRDs first left the Deployment behind for good:
	// the garbage collector cannot resolve an owner whose kind is gone.)
	func(g Gomega) {
		for _, obj := range []client.Object{
			&appsv1.Deployment{}, &corev1.Service{}, &corev1.ConfigMap{},
		} {
			err := admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "nginx-sample"}, obj)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T nginx-sample: %v", obj, err)
		}
		for _, name := range []string{"example-drink", "example-drink-v1alpha1", "example-drink-v1beta1"} {
			err := admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: name}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ConfigMap %s: %v", name, err)
		}
		err := admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "guestbook-sample"}, &appsv1.StatefulSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "StatefulSet guestbook-sample: %v", err)
	}(g)
}

// leftBehind lists what of the operator is in the cluster: its CRDs, its
// namespace, its webhook configurations and Pod policy, a Secret named like its
// certificate's or a leader election Lease, in any namespace.
func leftBehind() ([]string, error) {
	var found []string
	add := func(what string, err error) error {
		switch {
		case err == nil:
			found = append(found, what)
		case !apierrors.IsNotFound(err):
			return err
		}
		return nil
	}
	for _, name := range quickStartCRDs {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := add("CRD "+name, admin.Get(ctx(), client.ObjectKey{Name: name}, crd)); err != nil {
			return nil, err
		}
	}
	nsErr := admin.Get(ctx(), client.ObjectKey{Name: operatorNamespace}, &corev1.Namespace{})
	if err := add("namespace "+operatorNamespace, nsErr); err != nil {
		return nil, err
	}
	for _, wh := range webhookConfigurations {
		obj := wh.DeepCopyObject().(client.Object)
		if err := add(obj.GetObjectKind().GroupVersionKind().Kind+" "+obj.GetName(),
			admin.Get(ctx(), client.ObjectKeyFromObject(obj), obj)); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{podPolicy, writePolicy} {
		policy := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy"}}
		if err := add("ValidatingAdmissionPolicy "+name,
			admin.Get(ctx(), client.ObjectKey{Name: name}, policy)); err != nil {
			return nil, err
		}
	}
	secrets := &corev1.SecretList{}
	if err := admin.List(ctx(), secrets); err != nil {
		return nil, err
	}
	for _, s := range secrets.Items {
		if s.Name == "sunstrider-operator-webhook-server-cert" || s.Name == "sunstrider-operator-webhook-ca" {
			found = append(found, "Secret "+s.Namespace+"/"+s.Name)
		}
	}
	leases := &coordinationv1.LeaseList{}
	if err := admin.List(ctx(), leases); err != nil {
		return nil, err
	}
	for _, l := range leases.Items {
		if l.Name == "sunstrider-operator.sunstrider.cn" {
			found = append(found, "Lease "+l.Namespace+"/"+l.Name)
		}
	}
	return found, nil
}

// userEnv is the suite's environment (KUBECONFIG names the e2e cluster)
// without the variables of the `make test-e2e` running it, so that a nested
// make behaves as one typed in a shell.
func userEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MAKEFLAGS" || name == "MAKELEVEL" || name == "MFLAGS"
	})
}

// mustMake runs `make target` in the repository and returns its output.
func mustMake(t *testing.T, target string) string {
	t.Helper()
	cmd := exec.Command("make", target)
	cmd.Dir, cmd.Env = root, userEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", target, err, out)
	}
	return string(out)
}

// makeRun starts `make run` with its output in logFile, in a process group
// of its own, and returns a function that stops it as Ctrl-C in its
// terminal would (SIGINT to make, go run and the operator alike) and waits
// until it has ended; it fails the test if `make run` ended by itself.
func makeRun(t *testing.T, logFile string) (stop func()) {
	t.Helper()
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "run")
	cmd.Dir, cmd.Env = root, userEnv()
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// make exits non-zero on Ctrl-C (so does `go run`): only the end counts.
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = f.Close(); close(done) }()
	stopped := false
	return func() {
		if stopped {
			return
		}
		stopped = true
		select {
		case <-done:
			t.Errorf("make run ended by itself: %s", cmd.ProcessState)
			return
		default:
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("make run did not stop within 30 s of SIGINT")
		}
	}
}

// testsAfter lists the test files of this package sorting after file that
// declare tests.
func testsAfter(file string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(root, "test", "e2e", "*_test.go"))
	if err != nil {
		return nil, err
	}
	var after []string
	for _, p := range paths {
		if filepath.Base(p) <= file {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if strings.Count(string(data), "\nfunc Test") > strings.Count(string(data), "\nfunc TestMain(") {
			after = append(after, filepath.Base(p))
		}
	}
	return after, nil
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
