package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

func appRevisions(g Gomega, app *sunappsv1.Application) []appsv1.ControllerRevision {
	list := &appsv1.ControllerRevisionList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace(app.Namespace),
		client.MatchingLabels{ApplicationLabel: app.Name})).To(Succeed())
	return list.Items
}

func setImage(g Gomega, app *sunappsv1.Application, image string) {
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Deployment.Template.Spec.Containers[0].Image = image
		g.Expect(k8sClient.Update(context.Background(), got)).To(Succeed())
	}).Should(Succeed())
}

// An Application never changed has no revision; from the first change of
// its template on, every template rolled out is a ControllerRevision it
// owns, named in its status with its images and outcome; a template rolled
// out again (a rollback) is renumbered as the newest; revisionHistoryLimit
// bounds the old ones.
func TestRevisionsFollowTheTemplate(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "revised")
	app.Spec.Deployment.RevisionHistoryLimit = ptr.To[int32](2)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	image := func(g Gomega) string { return getDeployment(g, app).Spec.Template.Spec.Containers[0].Image }
	first := getApp(g, app).Spec.Deployment.Template.Spec.Containers[0].Image
	g.Eventually(func(g Gomega) { getDeployment(g, app) }).Should(Succeed())
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
	g.Expect(appRevisions(g, app)).To(BeEmpty(), "never changed: no revision")
	g.Expect(getApp(g, app).Status.CurrentRevision).To(BeZero())

	setImage(g, app, "example.com/app:2")
	g.Eventually(func(g Gomega) {
		g.Expect(image(g)).To(Equal("example.com/app:2"))
		st := getApp(g, app).Status
		g.Expect(st.CurrentRevision).To(Equal(int64(2)))
		g.Expect(st.Revisions).To(HaveLen(2))
		g.Expect(st.Revisions[0].Images).To(Equal([]string{"example.com/app:2"}))
		g.Expect(st.Revisions[0].Outcome).To(Equal(sunappsv1.RevisionRollingOut))
		g.Expect(st.Revisions[1].Revision).To(Equal(int64(1)))
		g.Expect(st.Revisions[1].Images).To(Equal([]string{first}))
		g.Expect(st.Revisions[1].Outcome).To(Equal(sunappsv1.RevisionRolledOut), "it had rolled out")
		for _, cr := range appRevisions(g, app) {
			g.Expect(metav1.IsControlledBy(&cr, getApp(g, app))).To(BeTrue())
		}
	}).Should(Succeed())
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, app).Status.Revisions[0].Outcome).To(Equal(sunappsv1.RevisionRolledOut))
	}).Should(Succeed())

	setImage(g, app, "example.com/app:3")
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, app).Status.CurrentRevision).To(Equal(int64(3)))
	}).Should(Succeed())

	// Back to the second template: its revision becomes the newest (4);
	// with revisionHistoryLimit 2 the first is deleted.
	setImage(g, app, "example.com/app:2")
	g.Eventually(func(g Gomega) {
		st := getApp(g, app).Status
		g.Expect(st.CurrentRevision).To(Equal(int64(4)))
		g.Expect(st.Revisions).To(HaveLen(2 + 1))
		g.Expect(st.Revisions[0].Images).To(Equal([]string{"example.com/app:2"}))
		revs := appRevisions(g, app)
		numbers := make([]int64, 0, len(revs))
		for _, cr := range revs {
			numbers = append(numbers, cr.Revision)
		}
		g.Expect(numbers).To(ConsistOf(int64(4), int64(3), int64(1)), "the old number 2 is now 4")
	}).Should(Succeed())
}
