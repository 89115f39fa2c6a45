package apps

import (
	"context"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

// A namespace being deleted refuses new objects (403 Forbidden, cause
// NamespaceTerminating), and the Application goes with it: a child the
// namespace's deletion removed first is neither a failure to report
// (ApplyFailed, Stalled) nor one to retry (the reconcile ends without
// error). envtest runs no namespace controller: the namespace stays
// Terminating, and the test deletes the Deployment as that controller
// would.
func TestChildRefusedByATerminatingNamespaceIsNoFailure(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	app := createSeedSample(t, g)
	key := client.ObjectKeyFromObject(app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).ObservedGeneration).To(Equal(app.Generation))
	}).Should(Succeed())

	g.Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: app.Namespace}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		ns := &corev1.Namespace{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: app.Namespace}, ns)).To(Succeed())
		g.Expect(ns.Status.Phase).To(Equal(corev1.NamespaceTerminating))
	}).Should(Succeed())

	cs, err := kubernetes.NewForConfig(suite.Config)
	g.Expect(err).NotTo(HaveOccurred())
	refused := func(g Gomega) int { return forbiddenDeploymentWrites(ctx, g, cs) }
	before := refused(g)
	g.Expect(k8sClient.Delete(ctx, getDeployment(g, app))).To(Succeed())
	// The operator tried to create it again: its cache has seen the
	// deletion, so every later reconcile meets the refusal too.
	g.Eventually(refused).Should(BeNumerically(">", before))

	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, app)).To(Succeed())
	g.Eventually(func() []client.ObjectKey {
		return suite.Reconciles.NotReconciledSince(mark, applicationController, key)
	}).Should(BeEmpty(), "a reconcile that met the refusal ended without error")

	got := getApp(g, app)
	ready := meta.FindStatusCondition(got.Status.Conditions, controllers.ConditionReady)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Reason).NotTo(Equal(sunappsv1.ReasonApplyFailed), "%+v", ready)
	g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, controllers.ConditionStalled)).To(BeFalse())
}

// forbiddenDeploymentWrites is how many writes of Deployments the API
// server refused with 403, from its /metrics.
func forbiddenDeploymentWrites(ctx context.Context, g Gomega, cs kubernetes.Interface) int {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	total := 0
	for line := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `code="403"`) ||
			!strings.Contains(line, `resource="deployments"`) {
			continue
		}
		fields := strings.Fields(line)
		n, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		g.Expect(err).NotTo(HaveOccurred())
		total += int(n)
	}
	return total
}
