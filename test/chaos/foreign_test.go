//go:build chaos

package chaos

import (
	"fmt"
	"testing"
	"time"

	"sunstrider.cn/operator/internal/controller/apps"
	"sunstrider.cn/operator/internal/controller/example"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
)

const foreignNamespace = "chaos-foreign"

// TestForeignObjectsAreLeftAlone puts an object the operator did not make
// where its child would go (a Deployment, a Service, a ConfigMap of the
// same name), and expects it never touched, the owner Ready=False with
// reason ResourceConflict and a Warning event, and the child made once the
// foreign object is removed. The "never touched" window holds a reconcile
// of the blocked owner, counted by the leader's
// controller_runtime_reconcile_total: an Application's periodic conflict
// recheck (conflictRecheck, set in the suite's OperatorConfiguration), a Drink's reconcile of a change it
// ignores (Drinks watch the ConfigMaps named like them and need no recheck).
func TestForeignObjectsAreLeftAlone(t *testing.T) {
	createNamespace(t, foreignNamespace)
	startReplicas(t)
	labels := map[string]string{"owner": "someone-else"}
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	newApp := func(name string) client.Object {
		app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: foreignNamespace}}
		app.Spec.Deployment.Replicas = ptr.To[int32](1)
		app.Spec.Deployment.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
		app.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
		return app
	}
	appReady := func(obj client.Object) *metav1.Condition {
		return meta.FindStatusCondition(obj.(*sunappsv1.Application).Status.Conditions, sunappsv1.ConditionReady)
	}
	// An Application rechecks its conflict without any event: the window
	// spans a recheck of every blocked Application.
	appWindow := window{
		controller: apps.ControllerName,
		length:     conflictRecheck + 10*time.Second,
		reconciles: blockedApplications,
	}
	// A Drink is reconciled after a change of its own.
	drinkWindow := window{
		controller: example.ControllerName,
		length:     3 * time.Second,
		poke: func(g Gomega, owner client.Object) {
			g.Expect(testutil.Nudge(ctx(), admin, owner)).To(Succeed())
		},
		reconciles: func(Gomega) int { return 1 },
	}
	for _, c := range []struct {
		name    string
		foreign client.Object
		owner   client.Object
		ready   func(client.Object) *metav1.Condition
		child   client.Object
		window  window
	}{
		{name: "Deployment", foreign: &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "fa", Namespace: foreignNamespace},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: pod},
		}, owner: newApp("fa"), ready: appReady, child: &appsv1.Deployment{}, window: appWindow},
		{name: "Service", foreign: &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "fs", Namespace: foreignNamespace},
			Spec: corev1.ServiceSpec{Selector: labels,
				Ports: []corev1.ServicePort{{Name: "other", Port: 9090, TargetPort: intstr.FromInt32(9090)}}},
		}, owner: newApp("fs"), ready: appReady, child: &corev1.Service{}, window: appWindow},
		{name: "ConfigMap", foreign: &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "fd", Namespace: foreignNamespace},
			Data:       map[string]string{"mine": "yes"},
		}, owner: &examplev1.Drink{
			ObjectMeta: metav1.ObjectMeta{Name: "fd", Namespace: foreignNamespace},
			Spec:       examplev1.DrinkSpec{Name: "fd", Drink: "tea"},
		}, ready: func(obj client.Object) *metav1.Condition {
			return meta.FindStatusCondition(obj.(*examplev1.Drink).Status.Conditions, examplev1.ConditionReady)
		}, child: &corev1.ConfigMap{}, window: drinkWindow},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(admin.Create(ctx(), c.foreign)).To(Succeed())
			g.Expect(admin.Create(ctx(), c.owner)).To(Succeed())
			key := client.ObjectKeyFromObject(c.owner)

			g.Eventually(func(g Gomega) {
				g.Expect(admin.Get(ctx(), key, c.owner)).To(Succeed())
				cond := c.ready(c.owner)
				g.Expect(cond).NotTo(BeNil())
				g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(cond.Reason).To(Equal("ResourceConflict"))
			}, time.Minute).Should(Succeed())
			g.Eventually(func(g Gomega) {
				events := &corev1.EventList{}
				g.Expect(admin.List(ctx(), events, client.InNamespace(foreignNamespace))).To(Succeed())
				var found bool
				for _, e := range events.Items {
					found = found || (e.InvolvedObject.Name == key.Name && e.Reason == "ResourceConflict" &&
						e.Type == corev1.EventTypeWarning && e.InvolvedObject.UID == c.owner.GetUID())
				}
				g.Expect(found).To(BeTrue(), "a Warning event ResourceConflict on the owner")
			}, time.Minute).Should(Succeed())
			// Never touched, over a window that holds a reconcile of the
			// blocked owner: the operator's field manager never wrote it,
			// no owner reference, spec (generation) and labels as made.
			// (Its resourceVersion and annotations do change: the
			// Deployment controller writes the foreign Deployment's status
			// and revision.)
			// The owner's reconciles after its own status write are over:
			// no reconcile for a second.
			lead, before := leaderReconciles(g, c.window.controller)
			g.Eventually(func(g Gomega) float64 {
				last := before
				lead, before = leaderReconciles(g, c.window.controller)
				return before - last
			}, time.Minute, time.Second).Should(BeZero(), "%s settles", c.window.controller)
			wanted := c.window.reconciles(g)
			if c.window.poke != nil {
				c.window.poke(g, c.owner)
			}
			g.Consistently(func(g Gomega) {
				live := c.foreign.DeepCopyObject().(client.Object)
				g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(c.foreign), live)).To(Succeed())
				g.Expect(live.GetGeneration()).To(Equal(c.foreign.GetGeneration()), "the foreign %s spec", c.name)
				g.Expect(live.GetOwnerReferences()).To(BeEmpty())
				g.Expect(live.GetLabels()).To(Equal(c.foreign.GetLabels()))
				for _, m := range live.GetManagedFields() {
					g.Expect(m.Manager).NotTo(Equal(apply.FieldOwner), "the operator wrote the foreign %s", c.name)
				}
			}, c.window.length, 200*time.Millisecond).Should(Succeed())
			lead2, after := leaderReconciles(g, c.window.controller)
			g.Expect(lead2).To(Equal(lead), "the same leader over the window")
			g.Expect(after-before).To(BeNumerically(">=", wanted),
				"reconciles by %s within the %s window (%d owners blocked)", c.window.controller, c.window.length, wanted)
			t.Logf("foreign %s: %s reconciled %.0f times in the %s window, %d blocked owners",
				c.name, c.window.controller, after-before, c.window.length, wanted)

			g.Expect(admin.Delete(ctx(), c.foreign)).To(Succeed())
			start := time.Now()
			g.Eventually(func(g Gomega) {
				child := c.child.DeepCopyObject().(client.Object)
				g.Expect(admin.Get(ctx(), key, child)).To(Succeed())
				ref := metav1.GetControllerOf(child)
				g.Expect(ref).NotTo(BeNil())
				g.Expect(ref.UID).To(Equal(c.owner.GetUID()))
				g.Expect(admin.Get(ctx(), key, c.owner)).To(Succeed())
				g.Expect(c.ready(c.owner).Reason).NotTo(Equal("ResourceConflict"))
			}, 90*time.Second, 100*time.Millisecond).Should(Succeed())
			t.Logf("foreign %s: left alone, ResourceConflict condition and event; child made %s after its removal",
				c.name, time.Since(start).Round(10*time.Millisecond))
		})
	}
}

// window is how a test shows that the operator looked at a blocked owner
// while it expects the foreign object untouched.
type window struct {
	// controller is the operator's controller of the owner's kind.
	controller string
	// length is how long the window lasts.
	length time.Duration
	// poke, when set, changes the owner at the window's start.
	poke func(Gomega, client.Object)
	// reconciles is how many reconciles of the controller the window must
	// hold at least, counted when it starts.
	reconciles func(Gomega) int
}

// blockedApplications counts the Applications of the cluster that are
// Ready=False with reason ResourceConflict: each rechecks once per
// conflictRecheck.
func blockedApplications(g Gomega) int {
	list := &sunappsv1.ApplicationList{}
	g.Expect(admin.List(ctx(), list)).To(Succeed())
	n := 0
	for _, app := range list.Items {
		if c := meta.FindStatusCondition(app.Status.Conditions, sunappsv1.ConditionReady); c != nil &&
			c.Reason == sunappsv1.ReasonResourceConflict {
			n++
		}
	}
	return n
}

// leaderReconciles returns the leading run ("slot/run") and its
// controller_runtime_reconcile_total of controller, summed over the results
// that are no error.
func leaderReconciles(g Gomega, controller string) (string, float64) {
	r := leader()
	g.Expect(r).NotTo(BeNil(), "no replica leads")
	r.mu.Lock()
	run := fmt.Sprintf("%d/%d", r.slot, r.runs)
	r.mu.Unlock()
	url := fmt.Sprintf("http://localhost:%d/metrics", replicaPorts[r.slot].metrics)
	metrics, err := testutil.ScrapeMetrics(metricsClient, url)
	g.Expect(err).NotTo(HaveOccurred())
	var total float64
	found := false
	for _, result := range []string{"success", "requeue", "requeue_after"} {
		v, ok := metrics[fmt.Sprintf(`controller_runtime_reconcile_total{controller=%q,result=%q}`, controller, result)]
		total += v
		found = found || ok
	}
	g.Expect(found).To(BeTrue(), "no controller_runtime_reconcile_total of %s", controller)
	return run, total
}
