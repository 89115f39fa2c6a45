//go:build node

package node

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// Three versions of the test image rolled out on the real node, then the
// rollback a user types: `kubectl sunstrider rollback NAME --to-revision
// 2` (the plugin on PATH, as make kubectl-plugin builds it). The app
// answers with the second version's, and the Application is Ready with the
// generation the rollback wrote.
func TestRollbackToTheSecondOfThreeVersions(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	app := application(ns, "history", 1, appContainer())
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	waitReady(g, app)
	answers := func(version string) {
		url := fmt.Sprintf("http://%s:80/", app.Status.ClusterIP)
		g.Eventually(func() (string, error) { return get(url) }, 60*time.Second, 250*time.Millisecond).
			Should(Equal(version), "GET %s", url)
	}
	answers("v1")
	for _, image := range []string{imageV2, imageV3} {
		g.Eventually(func(g Gomega) {
			g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			app.Spec.Deployment.Template.Spec.Containers[0].Image = image
			g.Expect(admin.Update(ctx(), app)).To(Succeed())
		}).Should(Succeed())
		waitReady(g, app)
	}
	answers("v3")
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Status.CurrentRevision).To(Equal(int64(3)))
		g.Expect(app.Status.Revisions).To(HaveLen(3))
		g.Expect(app.Status.Revisions[1].Images).To(Equal([]string{imageV2}))
		g.Expect(app.Status.Revisions[1].Outcome).To(Equal(sunappsv1.RevisionRolledOut))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	history, err := sh(kubectl, "sunstrider", "history", app.Name, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), history)
	t.Logf("kubectl sunstrider history:\n%s", history)

	before := app.Generation
	out, err := sh(kubectl, "sunstrider", "rollback", app.Name, "--to-revision", "2", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	t.Log(out)
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Generation).To(BeNumerically(">", before))
		ready := condition(app, sunappsv1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s %s", ready.Reason, ready.Message)
		g.Expect(ready.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.CurrentRevision).To(Equal(int64(4)), "revision 2 rolled out again is the newest")
		g.Expect(app.Status.Revisions[0].Images).To(Equal([]string{imageV2}))
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
	answers("v2")
}
