package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
)

// A child read (from the cache) as the operator's, then deleted and
// replaced by someone else's object of the same name before the write, is
// not overwritten: the write carries the resourceVersion that was checked,
// and the API server refuses it (Outcome.Stale). Without the precondition
// the force apply took the foreign Deployment over.
func TestChildReplacedAfterTheReadIsNotOverwritten(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	app := createSeedSample(t, g)
	read := getDeployment(g, app) // what a reconcile read before the swap
	// Stop the operator first: it would see the replacement itself.
	stopManager()
	t.Cleanup(func() { g.Expect(startManager()).To(Succeed()) })

	g.Expect(k8sClient.Delete(ctx, read, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	labels := map[string]string{"app": "theirs"}
	theirs := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/theirs:1"}}},
			},
		},
	}
	g.Eventually(func() error { return k8sClient.Create(ctx, theirs.DeepCopy()) }).Should(Succeed())
	created := getDeployment(g, app)

	desired := read.DeepCopy()
	desired.ResourceVersion, desired.ManagedFields = "", nil
	desired.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	desired.Spec.Replicas = ptr.To[int32](3) // a change, so the operator would write
	applier := &apply.Applier{Client: k8sClient, APIReader: k8sClient}
	out, err := applier.Write(ctx, desired, read)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Stale).To(BeTrue(), "the write must be refused, not applied: %+v", out)

	now := getDeployment(g, app)
	g.Expect(now.ResourceVersion).To(Equal(created.ResourceVersion), "the foreign Deployment is untouched")
	g.Expect(now.OwnerReferences).To(BeEmpty())
	g.Expect(*now.Spec.Replicas).To(Equal(int32(2)))
}
