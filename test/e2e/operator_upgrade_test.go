//go:build e2e

package e2e

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sunstrider.cn/operator/internal/controller/apps"
	"sunstrider.cn/operator/internal/controller/example"
	"sunstrider.cn/operator/internal/controller/poc"
	"sunstrider.cn/operator/internal/controller/webapp"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// upgradeNamespace holds the upgrade test's objects (and the Guestbook's
// workload).
const upgradeNamespace = "upgrade-e2e"

// TestUpgradeFromPreviousRelease upgrades the previous release (built from
// git history: hack/previous-release) to this tree as a user does, with
// workloads of every kind running and Applications being created and
// changed throughout, and checks that the upgrade is invisible to them: no
// Pod restarted, no Ready condition flapped, nothing written, lost or
// unreadable (CloudNativePG's upgrade test, docs/upgrading.md).
//
// Its place in the suite: it needs a cluster without the operator, which
// it installs in its previous version, and the tests before it (file
// order) run on the suite's deployment of this version. So it runs after
// e2e_test.go, malformed_test.go and metrics_test.go (hence this file's
// name, which also sorts before quickstart_test.go): it stops the suite's
// operator, takes the cluster back to bare as TestQuickStart does, and
// ends as the suite left it, this version's installer applied and its
// operator running as the suite's (startOperator), which TestQuickStart
// stops in turn. Run alone, it starts from the bare cluster `make
// test-e2e` made.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	began := time.Now()
	g := NewWithT(t)
	prev := previousRelease(t)
	dumpOnFailure(t, upgradeNamespace, "applications", "deployments", "replicasets", "statefulsets", "pods",
		"services", "configmaps", "drinks", "mycustomresources")

	// A bare cluster.
	stopOperator()
	current := mustSh(t, nil, kustomize, "build", "config/default")
	if out, err := sh(t, []byte(current), kubectl, "delete", "--ignore-not-found", "--wait", "--timeout=120s",
		"-f", "-"); err != nil {
		t.Fatalf("taking the cluster back to bare: %v\n%s", err, out)
	}
	g.Eventually(leftBehind).Should(BeEmpty(), "a bare cluster to start from")
	// The suite's operator kept the certificate of the Secret just deleted:
	// the new operator starts with an empty directory, as a new Pod does.
	g.Expect(os.RemoveAll(filepath.Join(workDir, "certs"))).To(Succeed())
	mustSh(t, nil, kubectl, "delete", "namespace", upgradeNamespace, "--ignore-not-found", "--wait", "--timeout=120s")

	// The previous release, installed and running.
	installer, err := os.ReadFile(prev.installer)
	g.Expect(err).NotTo(HaveOccurred())
	applyInstaller(t, string(installer))
	waitEstablished(g)
	token := strings.TrimSpace(mustSh(t, nil, kubectl, "create", "token", serviceAccount,
		"-n", operatorNamespace, "--duration=2h"))
	kubeconfig := serviceAccountKubeconfig(t, token)
	oldLog := filepath.Join(workDir, "manager-"+prev.version+".log")
	old, oldExited := startRelease(t, prev.manager, kubeconfig, filepath.Join(workDir, "certs-"+prev.version), oldLog)
	t.Logf("release %s (%s) running", prev.version, prev.commit[:7])

	// Workloads of every kind; Drinks written in every version.
	mustSh(t, nil, kubectl, "create", "namespace", upgradeNamespace)
	t.Cleanup(func() {
		_, _ = sh(t, nil, kubectl, "delete", "guestbook", "upgrade-guestbook", "--ignore-not-found", "--wait=false")
		_, _ = sh(t, nil, kubectl, "delete", "namespace", upgradeNamespace, "--ignore-not-found", "--wait=false")
	})
	parents := createUpgradeWorkloads(t, g)
	g.Eventually(func(g Gomega) {
		for _, p := range parents {
			u, err := p.get()
			g.Expect(err).NotTo(HaveOccurred())
			ready, current := readyStatus(u)
			g.Expect(current).To(BeTrue(), "%s status of its generation", p)
			want := "True"
			if p.name == "lonely" {
				want = "False" // its friend Pod does not exist
			}
			g.Expect(ready).To(Equal(want), "%s Ready", p)
		}
	}, 3*time.Minute).Should(Succeed(), "every object converged under release %s", prev.version)
	before := operands(g, upgradeNamespace)
	childrenOld := children(g, upgradeNamespace)
	t.Logf("under %s: %d objects converged; operands: %v", prev.version, len(parents), keys(before))

	ready := watchReady(t, parents)
	scraper := newMetricsScraper(t, upgradeNamespace)
	writer := startAppWriter(upgradeNamespace, func(name string, replicas int32) *sunappsv1.Application {
		return nginxApp(upgradeNamespace, name, replicas)
	})
	defer writer.stop()
	g.Eventually(func() int { return writer.acceptedSince(time.Time{}) }).Should(BeNumerically(">=", 3),
		"the writer at work before the upgrade")

	// The upgrade, as a user makes it: the new installer applied, the old
	// operator stopped (SIGTERM, as a rollout stops its Pod), the new one
	// started.
	upgradeStart := time.Now()
	applyInstaller(t, current)
	g.Expect(terminate(old, oldExited)).To(BeTrue(), "release %s stopped within its grace period on SIGTERM", prev.version)
	startOperator(t, kubeconfig)
	newReady := time.Now()
	t.Logf("upgraded in %s (installer applied, old operator stopped, new one ready)",
		newReady.Sub(upgradeStart).Round(time.Millisecond))
	g.Eventually(func() int { return writer.acceptedSince(newReady) }).Should(BeNumerically(">=", 4),
		"the writer at work after the upgrade")
	last, accepted, refused := writer.stop()
	t.Logf("writer: %d writes accepted, %d refused (while no webhook answered), %d Applications made",
		accepted, refused, len(last))
	for name := range last {
		parents = append(parents, parentRef{sunappsv1.GroupVersion.WithKind("Application"), upgradeNamespace, name})
	}

	// Settled: the new operator has reconciled every object, and all
	// converged.
	controllers := map[string]int{}
	for _, p := range parents {
		controllers[controllerOf(p)]++
	}
	g.Eventually(func(g Gomega) {
		counts, err := scraper.reconciles(slices.Collect(maps.Keys(controllers))...)
		g.Expect(err).NotTo(HaveOccurred())
		for c, n := range controllers {
			g.Expect(counts[c]).To(BeNumerically(">=", n), "reconciles by %s", c)
		}
		expectConverged(g, parents, last)
	}, 3*time.Minute).Should(Succeed(), "every object reconciled by the new operator and converged")
	settled := time.Now()

	// Zero writes once settled: a window holding one more reconcile of
	// every object (an annotation no controller reads), whose end shows in
	// controller_runtime_reconcile_total.
	childrenBefore := children(g, upgradeNamespace)
	// Informational: the children of the old version the new one changed
	// (metadata included) on its way to settle.
	var upgraded []string
	for k, v := range childrenOld {
		if childrenBefore[k] != v {
			upgraded = append(upgraded, k)
		}
	}
	slices.Sort(upgraded)
	t.Logf("children the new version wrote while settling: %d of %d %v", len(upgraded), len(childrenOld), upgraded)
	mark, err := scraper.reconciles(slices.Collect(maps.Keys(controllers))...)
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range parents {
		u, err := p.get()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(testutil.Nudge(ctx(), admin, u)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		counts, err := scraper.reconciles(slices.Collect(maps.Keys(controllers))...)
		g.Expect(err).NotTo(HaveOccurred())
		for c, n := range controllers {
			g.Expect(counts[c]-mark[c]).To(BeNumerically(">=", n), "reconciles by %s since the nudge", c)
		}
	}).Should(Succeed(), "every object reconciled again")
	childrenAfter := children(g, upgradeNamespace)
	var rewritten []string
	for k, v := range childrenBefore {
		if childrenAfter[k] != v {
			rewritten = append(rewritten, k)
		}
	}

	// Nothing restarted: the operands running before the upgrade run the
	// same ReplicaSets, revisions and Pods.
	after := operands(g, upgradeNamespace)
	rolled := 0
	for k, want := range before {
		for _, item := range want {
			if !slices.Contains(after[k], item) {
				rolled++
				t.Errorf("%s: %s is gone after the upgrade; now %v", k, item, after[k])
			}
		}
		for _, item := range after[k] {
			if !slices.Contains(want, item) {
				t.Errorf("%s: %s is new after the upgrade", k, item)
			}
		}
	}
	flaps := ready.flaps()

	t.Logf("FIGURES: upgrade test %s; upgrade window %s; writes after settle: %d; pods rolled: %d; "+
		"conditions flapped: %d; settled %s after the new operator was ready",
		time.Since(began).Round(time.Second), newReady.Sub(upgradeStart).Round(time.Millisecond), len(rewritten),
		rolled, len(flaps), settled.Sub(newReady).Round(time.Millisecond))
	g.Expect(rewritten).To(BeEmpty(), "children written once the new operator settled")
	g.Expect(flaps).To(BeEmpty(), "Ready conditions that changed during the upgrade")

	t.Run("every Drink is readable in every version", func(t *testing.T) {
		g := NewWithT(t)
		for _, name := range []string{"drink-v1", "drink-v1beta1", "drink-v1alpha1"} {
			key := client.ObjectKey{Namespace: upgradeNamespace, Name: name}
			alpha, beta, hub := &examplev1alpha1.Drink{}, &examplev1beta1.Drink{}, &examplev1.Drink{}
			g.Expect(admin.Get(ctx(), key, hub)).To(Succeed(), "%s as v1", name)
			g.Expect(admin.Get(ctx(), key, beta)).To(Succeed(), "%s as v1beta1", name)
			g.Expect(admin.Get(ctx(), key, alpha)).To(Succeed(), "%s as v1alpha1", name)
			g.Expect(hub.Spec.Name).To(Equal("upgrader"), name)
			g.Expect(beta.Spec.Drink.Kind).To(Equal(hub.Spec.Drink), name)
			g.Expect(alpha.Spec.Order).To(Equal(examplev1alpha1.FormatOrder(hub.Spec.Drink, hub.Spec.Name)), name)
		}
		beta := &examplev1beta1.Drink{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: upgradeNamespace, Name: "drink-v1beta1"}, beta)).To(Succeed())
		g.Expect(beta.Spec.Drink.Size).To(Equal(examplev1beta1.SizeLarge), "v1beta1's size survives the upgrade")
	})

	t.Run("the CRDs store v1 only", func(t *testing.T) {
		g := NewWithT(t)
		for _, name := range quickStartCRDs {
			crd := customResourceDefinition(g, name)
			stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
			g.Expect(stored).To(Equal([]string{"v1"}), name)
		}
	})
}

// createUpgradeWorkloads makes objects of every kind in upgradeNamespace
// (and the cluster-scoped Guestbook), as kubectl users write them, and
// returns them.
func createUpgradeWorkloads(t *testing.T, g Gomega) []parentRef {
	t.Helper()
	var parents []parentRef
	appKind := sunappsv1.GroupVersion.WithKind("Application")
	for i := range 3 {
		name := fmt.Sprintf("app-%d", i)
		g.Expect(admin.Create(ctx(), nginxApp(upgradeNamespace, name, 2))).To(Succeed())
		parents = append(parents, parentRef{appKind, upgradeNamespace, name})
	}
	mustSh(t, nil, kubectl, "run", "friend", "-n", upgradeNamespace, "--image=nginx")
	mustSh(t, []byte(`apiVersion: poc.test.domain/v1
kind: MyCustomResource
metadata: {name: befriended, namespace: `+upgradeNamespace+`}
spec: {name: friend}
---
apiVersion: poc.test.domain/v1
kind: MyCustomResource
metadata: {name: lonely, namespace: `+upgradeNamespace+`}
spec: {name: nobody}
---
apiVersion: webapp.my.domain/v1
kind: Guestbook
metadata: {name: upgrade-guestbook}
spec: {size: 3, configMapName: upgrade-conf, alias: Phone, namespace: `+upgradeNamespace+`}
---
apiVersion: example.com/v1
kind: Drink
metadata: {name: drink-v1, namespace: `+upgradeNamespace+`}
spec: {name: upgrader, drink: coffee}
---
apiVersion: example.com/v1beta1
kind: Drink
metadata: {name: drink-v1beta1, namespace: `+upgradeNamespace+`}
spec: {name: upgrader, drink: {kind: tea, size: Large}}
---
apiVersion: example.com/v1alpha1
kind: Drink
metadata: {name: drink-v1alpha1, namespace: `+upgradeNamespace+`}
spec: {order: "juice for upgrader"}
`), kubectl, "apply", "-f", "-")
	mcr := pocv1.GroupVersion.WithKind("MyCustomResource")
	drink := examplev1.GroupVersion.WithKind("Drink")
	return append(parents,
		parentRef{mcr, upgradeNamespace, "befriended"}, parentRef{mcr, upgradeNamespace, "lonely"},
		parentRef{webappv1.GroupVersion.WithKind("Guestbook"), "", "upgrade-guestbook"},
		parentRef{drink, upgradeNamespace, "drink-v1"}, parentRef{drink, upgradeNamespace, "drink-v1beta1"},
		parentRef{drink, upgradeNamespace, "drink-v1alpha1"})
}

// nginxApp is an Application named name in namespace with a Deployment of
// replicas nginx:1.14.2 Pods and a ClusterIP Service.
func nginxApp(namespace, name string, replicas int32) *sunappsv1.Application {
	labels := map[string]string{"app": name}
	app := &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
	}
	app.Spec.Deployment.Replicas = &replicas
	app.Spec.Deployment.Selector = &metav1.LabelSelector{MatchLabels: labels}
	app.Spec.Deployment.Template = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "nginx", Image: "nginx:1.14.2", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
		}}},
	}
	app.Spec.Service.Ports = []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}
	return app
}

// expectConverged: every parent's status describes its generation and is
// Ready as before the upgrade; every Application of the writer holds the
// replicas last written and has them available.
func expectConverged(g Gomega, parents []parentRef, last map[string]int32) {
	for _, p := range parents {
		u, err := p.get()
		g.Expect(err).NotTo(HaveOccurred(), "%s exists", p)
		ready, current := readyStatus(u)
		g.Expect(current).To(BeTrue(), "%s status of its generation", p)
		if p.name != "lonely" {
			g.Expect(ready).To(Equal("True"), "%s Ready", p)
		}
	}
	for name, replicas := range last {
		app := &sunappsv1.Application{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: upgradeNamespace, Name: name}, app)).To(Succeed())
		g.Expect(*app.Spec.Deployment.Replicas).To(Equal(replicas), "%s holds its last accepted spec", name)
		g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)).To(BeTrue(), "%s Ready", name)
		g.Expect(app.Status.Workflow.AvailableReplicas).To(Equal(replicas), "%s available replicas", name)
		d := &appsv1.Deployment{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: upgradeNamespace, Name: name}, d)).To(Succeed())
		g.Expect(*d.Spec.Replicas).To(Equal(replicas), "Deployment %s replicas", name)
	}
}

// controllerOf names the controller reconciling p's kind.
func controllerOf(p parentRef) string {
	switch p.gvk.Kind {
	case "Application":
		return apps.ControllerName
	case "MyCustomResource":
		return poc.ControllerName
	case "Guestbook":
		return webapp.ControllerName
	default:
		return example.ControllerName
	}
}

// waitEstablished waits until the operator's CRDs serve.
func waitEstablished(g Gomega) {
	g.Eventually(func(g Gomega) {
		for _, name := range quickStartCRDs {
			conditions, _, _ := unstructured.NestedSlice(customResourceDefinition(g, name).Object, "status", "conditions")
			g.Expect(conditions).To(ContainElement(And(HaveKeyWithValue("type", "Established"),
				HaveKeyWithValue("status", "True"))), "CRD %s established", name)
		}
	}).Should(Succeed())
}

func customResourceDefinition(g Gomega, name string) *unstructured.Unstructured {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	g.Expect(admin.Get(ctx(), client.ObjectKey{Name: name}, crd)).To(Succeed())
	return crd
}

func keys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
