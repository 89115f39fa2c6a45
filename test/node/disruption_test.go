//go:build node

package node

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// An Application's spec.disruptionBudget holds through the eviction API,
// as a node drain uses it: with 2 replicas and maxUnavailable 1, the first
// eviction succeeds and the second is refused (429) until a replacement
// container is ready on the real node; then it succeeds too. The budget is
// kube-controller-manager's disruption controller's to enforce: the test
// first waits until it has counted the Pods (disruptionsAllowed 1).
func TestDisruptionBudgetHoldsThroughEvictions(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	app := application(ns, "budget", 2, appContainer())
	app.Spec.DisruptionBudget = &sunappsv1.DisruptionBudget{MaxUnavailable: new(intstr.FromInt32(1))}
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	waitReady(g, app)

	budgetAllows := func(n int32) {
		g.Eventually(func(g Gomega) {
			pdb := &policyv1.PodDisruptionBudget{}
			g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), pdb)).To(Succeed())
			g.Expect(metav1.IsControlledBy(pdb, app)).To(BeTrue())
			g.Expect(pdb.Status.ObservedGeneration).To(Equal(pdb.Generation))
			g.Expect(pdb.Status.CurrentHealthy).To(Equal(int32(2)))
			g.Expect(pdb.Status.DisruptionsAllowed).To(Equal(n))
		}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
	}
	budgetAllows(1)

	pods := appPods(g, ns, app.Name)
	g.Expect(pods).To(HaveLen(2))
	evict := func(pod corev1.Pod) error {
		return admin.SubResource("eviction").Create(ctx(), &pod, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}})
	}
	g.Expect(evict(pods[0])).To(Succeed(), "the first eviction is within the budget")
	err := evict(pods[1])
	g.Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "the second is refused while one is down: %v", err)
	t.Logf("second eviction refused: %v", err)

	// A replacement container becomes ready on the real node: the budget
	// allows one again, and the second eviction goes through.
	budgetAllows(1)
	g.Eventually(func() error { return evict(pods[1]) }, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	waitReady(g, app)
}
