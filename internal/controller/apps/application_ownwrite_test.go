package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// A status written by anyone else is another version: it brings a
// reconcile, which puts it right. (That the event of the operator's own
// write is dropped, SkipOwnWrites, is proved on its own.)
func TestStatusWrittenByHandIsPutRight(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "own-write")
	key := client.ObjectKeyFromObject(app)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) { getDeployment(g, app) }).Should(Succeed())
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	for range 3 {
		mark := suite.Reconciles.Mark()
		writeStatusByHand(g, app)
		suite.ExpectReconciled(g, mark, applicationController, key)
		g.Eventually(func(g Gomega) {
			c := readyCond(g, app)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).NotTo(Equal("WrittenByHand"))
		}).Should(Succeed())
	}
}

// writeStatusByHand writes app's status as another client would: Ready
// False while Reconciling (the invariants hold), for a reason of its own.
func writeStatusByHand(g Gomega, app *sunappsv1.Application) {
	got := getApp(g, app)
	stale := got.DeepCopy()
	byHand := metav1.Condition{Reason: "WrittenByHand", Message: "Written by hand.", ObservedGeneration: got.Generation}
	ready, reconciling := byHand, byHand
	ready.Type, ready.Status = sunappsv1.ConditionReady, metav1.ConditionFalse
	reconciling.Type, reconciling.Status = sunappsv1.ConditionReconciling, metav1.ConditionTrue
	meta.SetStatusCondition(&got.Status.Conditions, ready)
	meta.SetStatusCondition(&got.Status.Conditions, reconciling)
	g.Expect(k8sClient.Status().Patch(context.Background(), got, client.MergeFrom(stale))).To(Succeed())
}
