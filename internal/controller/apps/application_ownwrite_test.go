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

// The watch event of the operator's own status write is dropped
// (WrittenObjects.SkipOwnWrites): the reconcile it would bring writes
// nothing. A status written by anyone else still brings a reconcile, which
// puts it right, and the event of that write is dropped in turn.
func TestOwnStatusWriteBringsNoReconcile(t *testing.T) {
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
		// The last write's event has come and gone.
		g.Expect(reconciler.written.Remembers(key)).To(BeFalse())
	}).Should(Succeed())

	// Someone else's status write is another version: reconciled, and put
	// right by one write, whose own event is dropped. The event passes
	// when it reaches the predicate before the writer remembered the write
	// (the API server's answer and its watch event race: 2 tries in 20
	// here), so up to ten tries; each shows the reconcile and the restore.
	skippedOnce := false
	for try := 0; try < 10 && !skippedOnce; try++ {
		mark := suite.Reconciles.Mark()
		skipped := reconciler.written.Skipped()
		writeStatusByHand(g, app)
		suite.ExpectReconciled(g, mark, applicationController, key)
		g.Eventually(func(g Gomega) {
			c := readyCond(g, app)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(reconciler.written.Remembers(key)).To(BeFalse())
		}).Should(Succeed())
		skippedOnce = reconciler.written.Skipped() > skipped
	}
	g.Expect(skippedOnce).To(BeTrue(), "the event of the operator's restore was never dropped")
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
