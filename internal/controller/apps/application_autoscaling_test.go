package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/testutil"
)

func getAutoscaler(g Gomega, app *sunappsv1.Application) *autoscalingv2.HorizontalPodAutoscaler {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app), hpa)).To(Succeed())
	return hpa
}

// spec.autoscaling becomes a HorizontalPodAutoscaler aimed at the
// Application itself, controlled by it, kept as the spec says, and deleted
// when the field goes. What the autoscaler writes (the Application's scale
// subresource, as kube-controller-manager's HPA controller does; envtest
// runs none) reaches the Deployment, and no write of the operator undoes it.
func TestAutoscalerTargetsTheApplication(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "scaled")
	app.Spec.Autoscaling = &sunappsv1.Autoscaling{MinReplicas: new(int32(1)), MaxReplicas: 4}
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())

	g.Eventually(func(g Gomega) {
		hpa := getAutoscaler(g, app)
		g.Expect(metav1.IsControlledBy(hpa, getApp(g, app))).To(BeTrue())
		g.Expect(hpa.Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))
		g.Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{
			APIVersion: "apps.sunstrider.cn/v1", Kind: "Application", Name: app.Name}))
		g.Expect(hpa.Spec.MaxReplicas).To(Equal(int32(4)))
	}).Should(Succeed())
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	// The autoscaler scales the Application: the Deployment follows, and
	// the operator restores nothing.
	restored := func(g Gomega) float64 {
		return metricValue(g, metrics.ChildWritesTotal, "kind", "Deployment", "action", metrics.ActionRestored)
	}
	before := restored(g)
	scale := &autoscalingv1.Scale{}
	g.Expect(k8sClient.SubResource("scale").Get(ctx, app, scale)).To(Succeed())
	g.Expect(scale.Status.Selector).NotTo(BeEmpty(), "the HPA finds the Pods by it")
	scale.Spec.Replicas = 3
	g.Expect(k8sClient.SubResource("scale").Update(ctx, app, client.WithSubResourceBody(scale))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(*getDeployment(g, app).Spec.Replicas).To(Equal(int32(3)))
		g.Expect(getApp(g, app).Status.ObservedGeneration).To(Equal(getApp(g, app).Generation))
	}).Should(Succeed())
	g.Expect(restored(g)).To(Equal(before), "the operator undid none of the autoscaler's writes")
	g.Expect(*getApp(g, app).Spec.Deployment.Replicas).To(Equal(int32(3)))

	// Another field manager changes the autoscaler: put back.
	g.Eventually(func(g Gomega) {
		hpa := getAutoscaler(g, app)
		hpa.Spec.MaxReplicas = 9
		g.Expect(k8sClient.Update(ctx, hpa, client.FieldOwner("someone-else"))).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getAutoscaler(g, app).Spec.MaxReplicas).To(Equal(int32(4)))
	}).Should(Succeed())

	// The field removed: the autoscaler is deleted.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Autoscaling = nil
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(app),
			&autoscalingv2.HorizontalPodAutoscaler{}))
	}).Should(BeTrue())
}

// minReplicas above maxReplicas is refused by the API server naming the
// field, and nothing is stored.
func TestInvalidAutoscalingIsRefused(t *testing.T) {
	g := NewWithT(t)
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "invalid-autoscaling")
	app.Spec.Autoscaling = &sunappsv1.Autoscaling{MinReplicas: new(int32(5)), MaxReplicas: 2}
	err := k8sClient.Create(context.Background(), app)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.autoscaling.minReplicas"))
	g.Expect(err.Error()).To(ContainSubstring("minReplicas must not be above maxReplicas"))
	g.Expect(apierrors.IsNotFound(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app),
		&sunappsv1.Application{}))).To(BeTrue(), "nothing stored")
}
