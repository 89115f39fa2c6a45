//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
)

// readySeen is one status of the Application as a watcher saw it.
type readySeen struct {
	observedGeneration int64
	ready              metav1.ConditionStatus
	reason             string
	workflow           sunappsv1.WorkflowStatus
}

func (s readySeen) String() string {
	return fmt.Sprintf("gen %d Ready=%s (%s) updated %d ready %d available %d of %d",
		s.observedGeneration, s.ready, s.reason, s.workflow.UpdatedReplicas, s.workflow.ReadyReplicas,
		s.workflow.AvailableReplicas, s.workflow.Replicas)
}

// TestARolloutTakesReadyFalseOnce changes the image of a converged
// Application of three replicas (a rolling update of several steps, run by
// kube-controller-manager) and watches its status as Flux or Argo CD would:
// Ready goes False once when the operator sees the new generation and back
// to True once the new Pods are all rolled out and available, never True
// in between (no True→False→True inside one rollout), while the Deployment
// goes through the rollout's steps, each an event the operator reconciles.
// The rollout costs two status writes, plus one for each StatusBatch it
// lasts (the counters' writes put off).
func TestARolloutTakesReadyFalseOnce(t *testing.T) {
	g := NewWithT(t)
	const name = "rollout-once"
	dumpOnFailure(t, "default", "applications", "deployments", "replicasets", "pods")
	replicas := int32(3)
	app := nginxApp("default", name, replicas)
	// Each new Pod counts as available 2 s after it is ready (kwok makes
	// it ready at once): the rollout takes several steps of the Deployment
	// controller, each seen by the operator.
	app.Spec.Deployment.MinReadySeconds = 2
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	t.Cleanup(func() { _ = admin.Delete(ctx(), app) })

	key := client.ObjectKeyFromObject(app)
	rolledOut := func(a *sunappsv1.Application) bool {
		w := a.Status.Workflow
		return a.Status.ObservedGeneration == a.Generation &&
			meta.IsStatusConditionTrue(a.Status.Conditions, sunappsv1.ConditionReady) &&
			w.Replicas == replicas && w.UpdatedReplicas == replicas && w.AvailableReplicas == replicas
	}
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), key, app)).To(Succeed())
		g.Expect(rolledOut(app)).To(BeTrue(), "status: %+v", app.Status)
	}, wait, interval).Should(Succeed())

	// A watch from the converged Application's resourceVersion: every
	// status written from here on.
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	g.Expect(err).NotTo(HaveOccurred())
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx(), &sunappsv1.ApplicationList{}, client.InNamespace("default"),
		&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name),
			Raw: &metav1.ListOptions{ResourceVersion: app.ResourceVersion}})
	g.Expect(err).NotTo(HaveOccurred())
	defer w.Stop()
	// The Deployment's steps, from its current version.
	d := &appsv1.Deployment{}
	g.Expect(admin.Get(ctx(), key, d)).To(Succeed())
	dw, err := wc.Watch(ctx(), &appsv1.DeploymentList{}, client.InNamespace("default"),
		&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name),
			Raw: &metav1.ListOptions{ResourceVersion: d.ResourceVersion}})
	g.Expect(err).NotTo(HaveOccurred())
	defer dw.Stop()

	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:1.25.3"
	g.Expect(admin.Patch(ctx(), app, patch)).To(Succeed())
	newGen := app.Generation

	// Every status until the Application says the new spec is rolled out:
	// Ready True at the new generation with every Pod updated and available.
	var seen []readySeen
	last := app.Status.DeepCopy()
	writes, steps := 0, 0
	var first, final time.Time
	timeout := time.After(2 * time.Minute)
	for done := false; !done; {
		select {
		case ev, ok := <-dw.ResultChan():
			g.Expect(ok).To(BeTrue(), "the Deployment's watch ended")
			if d, isDeployment := ev.Object.(*appsv1.Deployment); isDeployment &&
				(d.Status.Replicas > replicas || d.Status.AvailableReplicas < replicas) {
				steps++
			}
		case ev, ok := <-w.ResultChan():
			g.Expect(ok).To(BeTrue(), "the watch ended; seen: %v", seen)
			g.Expect(ev.Type).To(Equal(watch.Modified), "event %s", ev.Type)
			a := ev.Object.(*sunappsv1.Application)
			if equality.Semantic.DeepEqual(&a.Status, last) {
				continue // a spec or metadata change
			}
			writes++
			if first.IsZero() {
				first = time.Now()
			}
			final = time.Now()
			last = a.Status.DeepCopy()
			ready := meta.FindStatusCondition(a.Status.Conditions, sunappsv1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			seen = append(seen, readySeen{a.Status.ObservedGeneration, ready.Status, ready.Reason, a.Status.Workflow})
			done = a.Generation == newGen && rolledOut(a)
		case <-timeout:
			t.Fatalf("the rollout did not finish in 2 minutes; statuses seen:\n%s", statuses(seen))
		}
	}
	t.Logf("the rollout took %d status writes over %s, %d Deployment steps:\n%s", writes,
		final.Sub(first).Round(time.Millisecond), steps, statuses(seen))

	// Ready: True while the old generation is shown, then False from the
	// first status of the new generation until the last, which is True.
	falseSeen := false
	for i, s := range seen {
		isLast := i == len(seen)-1
		switch {
		case s.observedGeneration < newGen:
			g.Expect(s.ready).To(Equal(metav1.ConditionTrue), "status %d of the old generation:\n%s", i, statuses(seen))
		case isLast:
			g.Expect(s.ready).To(Equal(metav1.ConditionTrue))
		default:
			g.Expect(s.ready).NotTo(Equal(metav1.ConditionTrue),
				"Ready True before the new spec was rolled out (status %d):\n%s", i, statuses(seen))
			falseSeen = true
		}
	}
	g.Expect(falseSeen).To(BeTrue(), "Ready never went False for the rollout:\n%s", statuses(seen))
	// The Deployment went through the rollout's steps, each a reconcile in
	// which Ready could have gone True too early; the counters' writes were
	// put off: two writes, and one more per StatusBatch the rollout lasted.
	g.Expect(steps).To(BeNumerically(">", 0), "the Deployment never showed the rollout under way")
	most := 2 + int(final.Sub(first)/appscontroller.StatusBatch)
	g.Expect(writes).To(BeNumerically("<=", most), "%d status writes for a rollout of %s (%d Deployment steps):\n%s",
		writes, final.Sub(first).Round(time.Millisecond), steps, statuses(seen))
}

func statuses(seen []readySeen) string {
	lines := make([]string, len(seen))
	for i, s := range seen {
		lines[i] = fmt.Sprintf("  %d: %s", i, s)
	}
	return strings.Join(lines, "\n")
}
