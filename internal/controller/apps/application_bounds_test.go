package apps

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// overBound makes app's Pod template larger than MaxDeploymentBytes, with
// env entries of a few hundred bytes each (what the bound exists for).
func overBound(app *sunappsv1.Application) {
	c := &app.Spec.Deployment.Template.Spec.Containers[0]
	for i := 0; i*256 < sunappsv1.MaxDeploymentBytes+1024; i++ {
		c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("PAD_%d", i), Value: strings.Repeat("x", 240)})
	}
}

// This suite serves no webhooks, as a manager run with
// --enable-webhooks=false or without its ValidatingWebhookConfiguration:
// an Application beyond the webhook's size bounds is stored. The controller
// enforces them itself: it copies nothing into the children, and reports
// Stalled with the field and its size; the Deployment keeps the last spec
// within bounds. Back within bounds, the spec is applied.
func TestSpecBeyondItsBoundsIsNotCopied(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "bounded")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) { getDeployment(g, app) }).Should(Succeed())
	before := getDeployment(g, app)

	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		overBound(got)
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		c := meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonSpecTooLarge))
		g.Expect(c.Message).To(MatchRegexp(`^spec\.deployment is \d+ bytes as JSON, may not be more than 131072 bytes`))
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, sunappsv1.ConditionStalled)).To(BeTrue())
		g.Expect(eventReasons(g, app)).To(ContainElement(sunappsv1.ReasonSpecTooLarge), "Warning event")
	}).Should(Succeed())
	after := getDeployment(g, app)
	g.Expect(after.Spec.Template.Spec.Containers[0].Env).To(BeEmpty(), "nothing copied")
	g.Expect(after.Generation).To(Equal(before.Generation))
	g.Consistently(func(g Gomega) {
		g.Expect(getDeployment(g, app).Generation).To(Equal(before.Generation))
	}, time.Second).Should(Succeed())

	// A new Application beyond its bounds gets no Deployment at all.
	big := minimalApp(ns, "too-big")
	overBound(big)
	g.Expect(k8sClient.Create(ctx, big)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, big).Reason).To(Equal(sunappsv1.ReasonSpecTooLarge))
	}).Should(Succeed())
	err := k8sClient.Get(ctx, client.ObjectKeyFromObject(big), &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Deployment: %v", err)

	// Back within bounds: applied.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Deployment.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SMALL", Value: "1"}}
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getDeployment(g, app).Spec.Template.Spec.Containers[0].Env).To(ConsistOf(corev1.EnvVar{Name: "SMALL", Value: "1"}))
		g.Expect(readyCond(g, app).Reason).NotTo(Equal(sunappsv1.ReasonSpecTooLarge))
	}).Should(Succeed())
}
