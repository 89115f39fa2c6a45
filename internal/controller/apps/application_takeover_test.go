package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
	"sunstrider.cn/operator/internal/testutil/seedcontroller"
)

// TestSeedDesignChildrenAreTakenOverWithoutARollout: children an operator
// of the seed's design made (typed Create with a controller reference, the
// Application's labels on the Pod template and as the Service selector,
// never updated) are taken over by this operator without a new Pod
// template, so without a rollout: the Deployment's spec and Pod template
// stay as they were, labels the seed put on the template included. The
// Service selector becomes the Deployment's selector, which every Pod of
// the Deployment carries: the same Pods stay behind the Service
// (docs/upgrading.md).
func TestSeedDesignChildrenAreTakenOverWithoutARollout(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)

	// The seed's operator runs instead of this one.
	stopManager()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			g.Expect(startManager()).To(Succeed())
		}
	})
	exact := seedSample(ns)
	// Labels beyond the selector: the seed puts them all on the template
	// and in the Service selector.
	extra := seedSample(ns)
	extra.Name = "nginx-labelled"
	extra.Labels = map[string]string{"app": "nginx-labelled", "team": "blue", "tier": "web"}
	extra.Spec.Deployment.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx-labelled"}}
	extra.Spec.Service.Type = corev1.ServiceTypeClusterIP
	apps := []*sunappsv1.Application{exact, extra}
	seed := &seedcontroller.Reconciler{Client: client.WithFieldOwner(k8sClient, "seed-manager"), Scheme: scheme}
	for _, app := range apps {
		g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
		_, err := seed.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: app.Name}})
		g.Expect(err).NotTo(HaveOccurred())
		markDeploymentAvailable(g, app)
	}
	before := map[string]struct {
		spec     appsv1.DeploymentSpec
		selector map[string]string
	}{}
	for _, app := range apps {
		d := getDeployment(g, app)
		g.Expect(d.Labels).NotTo(HaveKey(apply.ManagedByLabel), "made by the seed's design")
		g.Expect(d.Spec.Template.Labels).To(Equal(app.Labels), "the seed's template labels")
		before[app.Name] = struct {
			spec     appsv1.DeploymentSpec
			selector map[string]string
		}{*d.Spec.DeepCopy(), getService(g, app).Spec.Selector}
	}

	g.Expect(startManager()).To(Succeed())
	restarted = true
	for _, app := range apps {
		g.Eventually(func(g Gomega) {
			d := getDeployment(g, app)
			g.Expect(d.Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue), "taken over")
			foreign, err := apply.ForeignFields(d)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(foreign).To(BeEmpty(), "no field of the Deployment's spec left to the seed's manager")
			svc := getService(g, app)
			foreign, err = apply.ForeignFields(svc)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(foreign).To(BeEmpty(), "no field of the Service's spec left to the seed's manager")
			g.Expect(svc.Spec.Selector).To(Equal(d.Spec.Selector.MatchLabels), "the Service selects by the Deployment's selector")
		}).Should(Succeed(), "%s taken over", app.Name)
		// What the Deployment controller reports for the taken-over
		// Deployment (envtest runs none).
		markDeploymentAvailable(g, app)
		g.Eventually(func(g Gomega) {
			ready := readyCond(g, app)
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s: %s", ready.Reason, ready.Message)
		}).Should(Succeed(), "%s Ready", app.Name)
	}
	// One more reconcile of each, after which nothing may have changed.
	mark := suite.Reconciles.Mark()
	for _, app := range apps {
		g.Expect(testutil.Nudge(ctx, k8sClient, app)).To(Succeed())
	}
	g.Eventually(func() []client.ObjectKey {
		return suite.Reconciles.NotReconciledSince(mark, applicationController, testutil.Keys(apps...)...)
	}).Should(BeEmpty())

	for _, app := range apps {
		d := getDeployment(g, app)
		was := before[app.Name]
		// The Deployment controller finds the ReplicaSet of an unchanged
		// template and keeps it: no rollout. (Its generation moves once: the
		// API server counts the operator's applied-config annotation as a
		// change of a Deployment, which the controller copies to the
		// ReplicaSet.)
		g.Expect(equality.Semantic.DeepEqual(d.Spec.Template, was.spec.Template)).To(BeTrue(),
			"%s: the Pod template unchanged:\nbefore %+v\nafter  %+v", app.Name, was.spec.Template, d.Spec.Template)
		g.Expect(equality.Semantic.DeepEqual(d.Spec, was.spec)).To(BeTrue(),
			"%s: the Deployment's spec unchanged:\nbefore %+v\nafter  %+v", app.Name, was.spec, d.Spec)
		// Every Pod the seed's Service reached carries the new selector.
		svc := getService(g, app)
		g.Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels))).To(BeTrue(),
			"%s: the Deployment's Pods stay behind the Service (selector %v, was %v)", app.Name, svc.Spec.Selector, was.selector)
		g.Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(was.selector))).To(BeTrue(),
			"%s: the new selector reaches every Pod the seed's did", app.Name)
		g.Expect(ptr.Deref(d.Spec.Replicas, 0)).To(Equal(int32(1)))
	}
}
