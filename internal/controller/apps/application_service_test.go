package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

// The Service's deletion, once spec.service has no ports, goes through the
// one outcome policy: a refused deletion is ApplyFailed (Stalled) in the
// status, in the API server's words, and the Service is deleted once the
// refusal is lifted, told by one Normal event.
func TestRefusedServiceDeletionShowsInTheStatus(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	app := createSeedSample(t, g)
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
	svc := getService(g, app)

	lift := pinServices(t, g, svc)
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Service.Ports = nil
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		c := readyCond(g, app)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonApplyFailed))
		g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(c.Message).To(ContainSubstring("Service"))
		g.Expect(c.Message).To(ContainSubstring("services are pinned"))
		stalled := meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Reason).To(Equal(sunappsv1.ReasonApplyFailed))
	}).Should(Succeed())
	g.Expect(getService(g, app).UID).To(Equal(svc.UID), "the refused deletion left the Service")

	lift()
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), &corev1.Service{}))
	}).Should(BeTrue(), "deleted once the refusal is lifted")
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		evs := &eventsv1.EventList{}
		g.Expect(k8sClient.List(ctx, evs, client.InNamespace(app.Namespace))).To(Succeed())
		var deleted []eventsv1.Event
		for _, e := range evs.Items {
			if e.Reason == controllers.ReasonDeleted && e.Regarding.Name == app.Name {
				deleted = append(deleted, e)
			}
		}
		g.Expect(deleted).To(HaveLen(1))
		g.Expect(deleted[0].Series).To(BeNil(), "one deletion, one event")
		g.Expect(deleted[0].Note).To(ContainSubstring("Service " + app.Namespace + "/" + app.Name + ": spec.service has no ports"))
	}).Should(Succeed())
}

// pinServices makes the API server refuse (Forbidden) the deletion of
// the Services of svc's namespace, and waits until it does (denyWrites).
// The returned function lifts the refusal.
func pinServices(t *testing.T, g Gomega, svc *corev1.Service) (lift func()) {
	return denyWrites(t, g, "pin-services-"+svc.Namespace, svc.Namespace, admissionregistrationv1.Delete,
		admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}},
		"false", "services are pinned", func() error {
			return k8sClient.Delete(context.Background(), svc.DeepCopy(), client.DryRunAll)
		})
}
