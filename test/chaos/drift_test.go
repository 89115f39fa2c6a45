//go:build chaos

package chaos

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
)

const (
	driftNamespace = "chaos-drift"
	stripNamespace = "chaos-strip"
	portNamespace  = "chaos-port"
	driftObjects   = 10
	driftP99Target = 2 * time.Second
	driftImage     = "nginx:1.25"
)

// drift is one kind of tampering with a child, and the check that it was
// undone.
type drift struct {
	name     string
	owner    string // "app" or "drink"
	tamper   func(g Gomega, name string)
	restored func(g Gomega, key client.ObjectKey)
}

func driftMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: driftNamespace}
}

func mergePatch(g Gomega, obj client.Object, name, patch string) {
	obj.SetName(name)
	obj.SetNamespace(driftNamespace)
	g.Expect(admin.Patch(ctx(), obj, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// kubectlPatch patches a child as `kubectl patch` does: an Update by the
// field manager "kubectl-patch", which then owns what it changed or added.
func kubectlPatch(g Gomega, obj client.Object, name string, pt types.PatchType, patch string) {
	obj.SetName(name)
	obj.SetNamespace(driftNamespace)
	g.Expect(admin.Patch(ctx(), obj, client.RawPatch(pt, []byte(patch)),
		client.FieldOwner("kubectl-patch"))).To(Succeed())
}

func deploymentRestored(g Gomega, key client.ObjectKey) {
	d := &appsv1.Deployment{}
	g.Expect(admin.Get(ctx(), key, d)).To(Succeed())
	g.Expect(*d.Spec.Replicas).To(Equal(int32(1)))
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(driftImage))
	// The image edit to evil:latest also made the API server default the
	// pull policy to Always; the operator sets neither: the default for
	// its tagged image is back only when the edit is wholly undone.
	g.Expect(d.Spec.Template.Spec.Containers[0].ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
	g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
	g.Expect(metav1.GetControllerOf(d)).NotTo(BeNil())
}

func serviceRestored(g Gomega, key client.ObjectKey) {
	svc := &corev1.Service{}
	g.Expect(admin.Get(ctx(), key, svc)).To(Succeed())
	g.Expect(svc.Spec.Ports).To(HaveLen(1))
	g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(80)))
	g.Expect(metav1.GetControllerOf(svc)).NotTo(BeNil())
}

// serviceSelectsPods checks that the Service selects the Application's Pods:
// its selector is the Deployment's, and what it selects are Pods of the
// Deployment's ReplicaSets.
func serviceSelectsPods(g Gomega, key client.ObjectKey) {
	svc, d := &corev1.Service{}, &appsv1.Deployment{}
	g.Expect(admin.Get(ctx(), key, svc)).To(Succeed())
	g.Expect(admin.Get(ctx(), key, d)).To(Succeed())
	g.Expect(svc.Spec.Selector).To(Equal(d.Spec.Selector.MatchLabels))
	pods := &corev1.PodList{}
	g.Expect(admin.List(ctx(), pods, client.InNamespace(key.Namespace),
		client.MatchingLabels(svc.Spec.Selector))).To(Succeed())
	g.Expect(pods.Items).NotTo(BeEmpty())
	for _, pod := range pods.Items {
		ref := metav1.GetControllerOf(&pod)
		g.Expect(ref).NotTo(BeNil(), "Pod %s", pod.Name)
		g.Expect(ref.Kind).To(Equal("ReplicaSet"), "Pod %s", pod.Name)
		g.Expect(ref.Name).To(HavePrefix(key.Name+"-"), "Pod %s", pod.Name)
	}
}

// applicationReady checks that the Application is Ready for its current
// generation.
func applicationReady(g Gomega, key client.ObjectKey) {
	app := &sunappsv1.Application{}
	g.Expect(admin.Get(ctx(), key, app)).To(Succeed())
	ready := meta.FindStatusCondition(app.Status.Conditions, sunappsv1.ConditionReady)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready %s: %s", ready.Reason, ready.Message)
	g.Expect(ready.ObservedGeneration).To(Equal(app.Generation))
}

func configMapRestored(g Gomega, key client.ObjectKey) {
	cm := &corev1.ConfigMap{}
	g.Expect(admin.Get(ctx(), key, cm)).To(Succeed())
	// The operator's keys. A key someone else added is removed too
	// (TestDrinkRemovesDataKeysOthersAdded); not checked here.
	g.Expect(cm.Data).To(HaveKeyWithValue("name", key.Name))
	g.Expect(cm.Data).To(HaveKeyWithValue("drink", "tea"))
	g.Expect(metav1.GetControllerOf(cm)).NotTo(BeNil())
}

func drifts() []drift {
	return []drift{
		{name: "Deployment image edited", owner: "app", restored: deploymentRestored,
			tamper: func(g Gomega, name string) {
				mergePatch(g, &appsv1.Deployment{}, name,
					`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"evil:latest"}]}}}}`)
			}},
		{name: "Deployment scaled by hand", owner: "app", restored: deploymentRestored,
			tamper: func(g Gomega, name string) {
				mergePatch(g, &appsv1.Deployment{}, name, `{"spec":{"replicas":5}}`)
			}},
		{name: "Deployment deleted", owner: "app", restored: deploymentRestored,
			tamper: func(g Gomega, name string) {
				g.Expect(admin.Delete(ctx(), &appsv1.Deployment{ObjectMeta: driftMeta(name)},
					client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			}},
		{name: "Service deleted", owner: "app", restored: serviceRestored,
			tamper: func(g Gomega, name string) {
				g.Expect(admin.Delete(ctx(), &corev1.Service{ObjectMeta: driftMeta(name)})).To(Succeed())
			}},
		// An atomic map: server-side apply alone cannot take the added key
		// out, the operator takes the selector over first.
		{name: "Service selector widened", owner: "app", restored: serviceSelectsPods,
			tamper: func(g Gomega, name string) {
				kubectlPatch(g, &corev1.Service{}, name, types.MergePatchType, `{"spec":{"selector":{"hijack":"yes"}}}`)
			}},
		{name: "Deployment env var added", owner: "app", restored: deploymentRestored,
			tamper: func(g Gomega, name string) {
				kubectlPatch(g, &appsv1.Deployment{}, name, types.JSONPatchType,
					`[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"INJECTED","value":"1"}]}]`)
			}},
		{name: "ConfigMap edited", owner: "drink", restored: configMapRestored,
			tamper: func(g Gomega, name string) {
				mergePatch(g, &corev1.ConfigMap{}, name, `{"data":{"drink":"whisky","extra":"x"}}`)
			}},
		{name: "ConfigMap deleted", owner: "drink", restored: configMapRestored,
			tamper: func(g Gomega, name string) {
				g.Expect(admin.Delete(ctx(), &corev1.ConfigMap{ObjectMeta: driftMeta(name)})).To(Succeed())
			}},
	}
}

// TestDriftIsRepaired tampers with the children of 10 Applications and 10
// Drinks in every way of drifts() and measures how long the operator takes
// to undo it: p99 at most 2 s. An Application is Ready again afterwards.
func TestDriftIsRepaired(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, driftNamespace)
	startReplicas(t)
	createDriftOwners(g, driftNamespace)

	all := make([]time.Duration, 0, len(drifts())*driftObjects)
	for _, d := range drifts() {
		took := make([]time.Duration, 0, driftObjects)
		for i := range driftObjects {
			name := fmt.Sprintf("%s-%d", d.owner, i)
			key := client.ObjectKey{Namespace: driftNamespace, Name: name}
			g.Eventually(func(g Gomega) { d.restored(g, key) }).Should(Succeed(), "%s before tampering", name)
			d.tamper(g, name)
			start := time.Now()
			g.Eventually(func(g Gomega) { d.restored(g, key) }, 30*time.Second, 20*time.Millisecond).
				Should(Succeed(), "%s: %s never undone", d.name, name)
			took = append(took, time.Since(start))
			if d.owner == "app" {
				g.Eventually(func(g Gomega) { applicationReady(g, key) }).Should(Succeed(), "%s: %s not Ready", d.name, name)
			}
		}
		all = append(all, took...)
		t.Logf("%-26s undone in p50 %s, p99 %s (%d samples)", d.name,
			percentile(took, 50).Round(time.Millisecond), percentile(took, 99).Round(time.Millisecond), len(took))
	}
	p99 := percentile(all, 99)
	t.Logf("drift repaired: p50 %s, p99 %s, max %s over %d samples (target p99 <= %s)",
		percentile(all, 50).Round(time.Millisecond), p99.Round(time.Millisecond),
		percentile(all, 100).Round(time.Millisecond), len(all), driftP99Target)
	g.Expect(p99).To(BeNumerically("<=", driftP99Target))
}

func createDriftOwners(g Gomega, namespace string) {
	for i := range driftObjects {
		app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: namespace}}
		app.Spec.Deployment.Replicas = ptr.To[int32](1)
		app.Spec.Deployment.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: driftImage}}
		app.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
		g.Expect(admin.Create(ctx(), app)).To(Succeed())
		g.Expect(admin.Create(ctx(), &examplev1.Drink{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("drink-%d", i), Namespace: namespace},
			Spec:       examplev1.DrinkSpec{Name: fmt.Sprintf("drink-%d", i), Drink: "tea"},
		})).To(Succeed())
	}
}

// TestChildStrippedOfItsOwnerReference removes the controller reference
// of a Deployment, a Service and a ConfigMap and requires the operator to
// re-adopt each within 30 s: the same child (not deleted, not replaced)
// controlled by its owner again, never by another controller.
func TestChildStrippedOfItsOwnerReference(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, stripNamespace)
	startReplicas(t)
	createDriftOwners(g, stripNamespace)
	appKey := client.ObjectKey{Namespace: stripNamespace, Name: "app-0"}
	drinkKey := client.ObjectKey{Namespace: stripNamespace, Name: "drink-0"}
	app, drink := &sunappsv1.Application{}, &examplev1.Drink{}
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), appKey, app)).To(Succeed())
		g.Expect(admin.Get(ctx(), drinkKey, drink)).To(Succeed())
		deploymentRestored(g, appKey)
		serviceRestored(g, appKey)
		configMapRestored(g, drinkKey)
	}).Should(Succeed())

	appReady := func() *metav1.Condition { return meta.FindStatusCondition(app.Status.Conditions, "Ready") }
	drinkReady := func() *metav1.Condition { return meta.FindStatusCondition(drink.Status.Conditions, "Ready") }
	for _, c := range []struct {
		child client.Object
		owner client.Object
		ready func() *metav1.Condition
	}{
		{&appsv1.Deployment{}, app, appReady},
		{&corev1.Service{}, app, appReady},
		{&corev1.ConfigMap{}, drink, drinkReady},
	} {
		kind := fmt.Sprintf("%T", c.child)
		c.child.SetName(c.owner.GetName())
		c.child.SetNamespace(stripNamespace)
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(c.child), c.child)).To(Succeed())
		uid := c.child.GetUID()
		g.Expect(admin.Patch(ctx(), c.child, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/metadata/ownerReferences"}]`)))).To(Succeed())
		start := time.Now()
		// Re-adoption is required: the child, the same object (neither
		// deleted nor replaced), gets its owner's controller reference
		// back; any other controller, or a harm, ends the wait at once.
		g.Eventually(func(g Gomega) {
			if err := admin.Get(ctx(), client.ObjectKeyFromObject(c.child), c.child); err != nil {
				StopTrying(fmt.Sprintf("reading the stripped %s", kind)).Wrap(err).Now()
			}
			if c.child.GetUID() != uid {
				StopTrying(fmt.Sprintf("the stripped %s was replaced (UID %s, was %s)", kind, c.child.GetUID(), uid)).Now()
			}
			ref := metav1.GetControllerOf(c.child)
			if ref != nil && ref.UID != c.owner.GetUID() {
				StopTrying(fmt.Sprintf("the stripped %s got another controller: %s %s (UID %s)",
					kind, ref.Kind, ref.Name, ref.UID)).Now()
			}
			g.Expect(ref).NotTo(BeNil(), "the stripped %s has no controller reference yet", kind)
		}, 30*time.Second, 50*time.Millisecond).Should(Succeed(),
			"%s stripped of its owner reference: re-adopted by %s within 30 s", kind, c.owner.GetName())
		took := time.Since(start).Round(time.Millisecond)
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(c.owner), c.owner)).To(Succeed())
		cond := c.ready()
		var state string
		if cond != nil {
			state = fmt.Sprintf("%s/%s", cond.Status, cond.Reason)
		}
		t.Logf("%s stripped of its owner reference: re-adopted after %s (owner Ready %s)", kind, took, state)
	}
}

// TestDriftServicePortEditedByHand edits the port of an Application's
// Service by hand (a merge patch replacing spec.ports) and expects the
// operator to restore it.
//
// Server-side apply alone adds the operator's port back but cannot remove
// the edited one, which the editor's field manager then owns; the operator
// takes the port list back first (docs/reliability.md).
func TestDriftServicePortEditedByHand(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, portNamespace)
	startReplicas(t)
	key := client.ObjectKey{Namespace: portNamespace, Name: "app-port"}
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	app.Spec.Deployment.Replicas = ptr.To[int32](1)
	app.Spec.Deployment.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: driftImage}}
	app.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	g.Eventually(func(g Gomega) { serviceRestored(g, key) }).Should(Succeed())

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	g.Expect(admin.Patch(ctx(), svc, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"ports":[{"name":"http","port":8080,"targetPort":80}]}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) { serviceRestored(g, key) }, 30*time.Second, 20*time.Millisecond).Should(Succeed(),
		func() string {
			_ = admin.Get(ctx(), key, app)
			return fmt.Sprintf("Application conditions: %+v", app.Status.Conditions)
		})
}
