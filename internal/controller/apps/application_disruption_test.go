package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
)

func getBudget(g Gomega, app *sunappsv1.Application) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app), pdb)).To(Succeed())
	return pdb
}

// spec.disruptionBudget becomes a PodDisruptionBudget on the Deployment's
// Pods, controlled by the Application, kept as the spec says (a change by
// another field manager is put back), and deleted when the field goes.
func TestDisruptionBudgetFollowsTheSpec(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "budget")
	app.Spec.DisruptionBudget = &sunappsv1.DisruptionBudget{MaxUnavailable: new(intstr.FromInt32(1))}
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())

	g.Eventually(func(g Gomega) {
		pdb := getBudget(g, app)
		g.Expect(metav1.IsControlledBy(pdb, getApp(g, app))).To(BeTrue())
		g.Expect(pdb.Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))
		g.Expect(pdb.Spec.MaxUnavailable).To(Equal(new(intstr.FromInt32(1))))
		g.Expect(pdb.Spec.MinAvailable).To(BeNil())
		g.Expect(pdb.Spec.Selector).To(Equal(getDeployment(g, app).Spec.Selector))
	}).Should(Succeed())
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	// Another field manager changes it: put back.
	g.Eventually(func(g Gomega) {
		pdb := getBudget(g, app)
		pdb.Spec.MaxUnavailable = new(intstr.FromInt32(3))
		g.Expect(k8sClient.Update(ctx, pdb, client.FieldOwner("someone-else"))).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getBudget(g, app).Spec.MaxUnavailable).To(Equal(new(intstr.FromInt32(1))))
	}).Should(Succeed())

	// minAvailable instead: the budget follows.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.DisruptionBudget = &sunappsv1.DisruptionBudget{MinAvailable: new(intstr.FromString("50%"))}
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		pdb := getBudget(g, app)
		g.Expect(pdb.Spec.MinAvailable).To(Equal(new(intstr.FromString("50%"))))
		g.Expect(pdb.Spec.MaxUnavailable).To(BeNil())
	}).Should(Succeed())

	// The field removed: the budget is deleted.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.DisruptionBudget = nil
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), &policyv1.PodDisruptionBudget{}))
	}).Should(BeTrue())
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
}

// A PodDisruptionBudget of the Application's name that someone else made
// is never adopted or overwritten: ResourceConflict, Stalled.
func TestForeignDisruptionBudgetIsNeverOverwritten(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	foreign := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(5)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}}},
	}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	app := minimalApp(ns, "theirs")
	app.Spec.DisruptionBudget = &sunappsv1.DisruptionBudget{MaxUnavailable: new(intstr.FromInt32(1))}
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := readyCond(g, app)
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonResourceConflict))
		g.Expect(c.Message).To(ContainSubstring("PodDisruptionBudget " + ns + "/theirs"))
	}).Should(Succeed())
	pdb := getBudget(g, app)
	g.Expect(pdb.ResourceVersion).To(Equal(foreign.ResourceVersion))
	g.Expect(pdb.OwnerReferences).To(BeEmpty())
}

// Both minAvailable and maxUnavailable, or a percentage past 100%, are
// refused by the API server naming the field, and nothing is stored.
func TestInvalidDisruptionBudgetsAreRefused(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	for _, tc := range []struct {
		name   string
		budget sunappsv1.DisruptionBudget
		want   string
	}{
		{name: "both", budget: sunappsv1.DisruptionBudget{MinAvailable: new(intstr.FromInt32(1)),
			MaxUnavailable: new(intstr.FromInt32(1))}, want: "spec.disruptionBudget"},
		{name: "neither", want: "exactly one of minAvailable and maxUnavailable"},
		{name: "past 100%", budget: sunappsv1.DisruptionBudget{MaxUnavailable: new(intstr.FromString("150%"))},
			want: "spec.disruptionBudget.maxUnavailable"},
		{name: "negative", budget: sunappsv1.DisruptionBudget{MinAvailable: new(intstr.FromInt32(-1))},
			want: "spec.disruptionBudget.minAvailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			app := minimalApp(ns, "invalid-budget")
			app.Spec.DisruptionBudget = &tc.budget
			err := k8sClient.Create(context.Background(), app)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
			g.Expect(apierrors.IsNotFound(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app),
				&sunappsv1.Application{}))).To(BeTrue(), "nothing stored")
		})
	}
}
