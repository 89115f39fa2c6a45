package apply_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"sunstrider.cn/operator/internal/apply"
)

// TestWriteRequestsByDrift restores children changed by other field
// managers through Applier.Write on a real API server and counts the
// requests it makes: a value changed by hand is restored by the forced
// apply alone; an entry added by hand needs the take-over too (apply,
// managedFields patch, apply); an entry that makes the operator's values
// invalid beside it (two ports of one name) is taken over first, from the
// child read again. Another controller's status write in between costs no
// refused apply. After each restore, the next Write makes no request.
func TestWriteRequestsByDrift(t *testing.T) {
	base := apiServer(t)
	requests := &requestLog{}
	record, taken := requests.record, requests.taken
	// afterApply, when set, runs once after the next apply: another
	// controller's write between two of the operator's requests.
	var afterApply func()
	runAfterApply := func() {
		if then := afterApply; then != nil {
			afterApply = nil
			then()
		}
	}
	counted := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			record("get")
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			verb := patchVerb(patch)
			record(verb)
			err := c.Patch(ctx, obj, patch, opts...)
			if verb == "apply" {
				runAfterApply()
			}
			return err
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			record("apply")
			err := c.Apply(ctx, obj, opts...)
			runAfterApply()
			return err
		},
	})
	applier := &apply.Applier{Client: counted, APIReader: counted}
	ctx := t.Context()
	g := NewWithT(t)
	const ns = "write-requests"
	g.Expect(base.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	labels := map[string]string{"app": "web"}
	// The operator's mark: the cache keeps other managers' entries of the
	// children that carry it.
	marked := map[string]string{apply.ManagedByLabel: apply.ManagedByValue}
	deployment := func() client.Object {
		return &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: marked},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
				},
			},
		}
	}
	service := func() client.Object {
		return &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: marked},
			Spec: corev1.ServiceSpec{
				Selector: labels,
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80)}},
			},
		}
	}
	for _, desired := range []func() client.Object{deployment, service} {
		out, err := applier.Write(ctx, desired(), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Action).To(Equal(apply.Created))
	}
	taken()

	// statusWritten writes the Deployment's status as
	// kube-controller-manager does right after a change of its spec: its
	// resourceVersion moves on.
	generation := int64(0)
	statusWritten := func() {
		generation++
		status := fmt.Sprintf(`{"status":{"observedGeneration":%d}}`, generation)
		g.Expect(base.Status().Patch(ctx, named(child{empty: deployment}, client.ObjectKey{Namespace: ns, Name: "web"}),
			client.RawPatch(types.MergePatchType, []byte(status)), client.FieldOwner("kube-controller-manager"))).To(Succeed())
	}

	tests := []struct {
		name     string
		desired  func() client.Object
		patch    string
		pt       types.PatchType
		requests []string
		restored func(g Gomega, live client.Object)
		// afterRead and afterApply are another controller's writes after
		// the operator's cache read and after its first apply.
		afterRead, afterApply func()
	}{
		{
			name: "image changed by hand", desired: deployment, pt: types.MergePatchType,
			patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"evil:1"}]}}}}`,
			requests: []string{"apply"},
			restored: func(g Gomega, live client.Object) {
				g.Expect(live.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
			},
		},
		{
			// The API server defaults imagePullPolicy from the image's tag:
			// Always for :latest, IfNotPresent before. The value it changed
			// with the hand edit is the editor's (an Update manager owns
			// what changed), the operator does not set it, so it is taken
			// over and the second apply puts the default back.
			name: "image changed by hand to a :latest tag", desired: deployment, pt: types.MergePatchType,
			patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"evil:latest"}]}}}}`,
			requests: []string{"apply", "patch", "apply"},
			restored: func(g Gomega, live client.Object) {
				c := live.(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
				g.Expect(c.Image).To(Equal("nginx:1.27"))
				g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
			},
		},
		{
			// The cached copy is older than the child (no Conflict): the
			// apply is conditional on the UID only.
			name: "image changed by hand, status written after the read", desired: deployment, pt: types.MergePatchType,
			patch:     `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"evil:2"}]}}}}`,
			afterRead: statusWritten,
			requests:  []string{"apply"},
			restored: func(g Gomega, live client.Object) {
				g.Expect(live.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
			},
		},
		{
			name: "scaled by hand", desired: deployment, pt: types.MergePatchType,
			patch:    `{"spec":{"replicas":5}}`,
			requests: []string{"apply"},
			restored: func(g Gomega, live client.Object) {
				g.Expect(*live.(*appsv1.Deployment).Spec.Replicas).To(Equal(int32(1)))
			},
		},
		{
			name: "selector widened by hand", desired: service, pt: types.MergePatchType,
			patch:    `{"spec":{"selector":{"hijack":"yes"}}}`,
			requests: []string{"apply"},
			restored: func(g Gomega, live client.Object) {
				g.Expect(live.(*corev1.Service).Spec.Selector).To(Equal(labels))
			},
		},
		{
			name: "env var added by hand", desired: deployment, pt: types.JSONPatchType,
			patch:    `[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"X","value":"1"}]}]`,
			requests: []string{"apply", "patch", "apply"},
			restored: func(g Gomega, live client.Object) {
				g.Expect(live.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
			},
		},
		{
			// The take-over's patch, guarded by the resourceVersion the
			// apply returned, is refused: it is made again from the child
			// read again.
			name: "env var added by hand, status written after the apply", desired: deployment, pt: types.JSONPatchType,
			patch:      `[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"Y","value":"1"}]}]`,
			afterApply: statusWritten,
			requests:   []string{"apply", "patch", "get", "patch", "apply"},
			restored: func(g Gomega, live client.Object) {
				g.Expect(live.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
			},
		},
		{
			name: "port replaced by one of the same name", desired: service, pt: types.MergePatchType,
			patch:    `{"spec":{"ports":[{"name":"http","port":8080,"targetPort":80}]}}`,
			requests: []string{"apply", "get", "patch", "apply"},
			restored: func(g Gomega, live client.Object) {
				ports := live.(*corev1.Service).Spec.Ports
				g.Expect(ports).To(HaveLen(1))
				g.Expect(ports[0].Port).To(Equal(int32(80)))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			key := client.ObjectKey{Namespace: ns, Name: "web"}
			g.Expect(base.Patch(ctx, named(child{empty: tt.desired}, key), client.RawPatch(tt.pt, []byte(tt.patch)),
				client.FieldOwner("kubectl-patch"))).To(Succeed())

			live := cached(g, base, tt.desired, key)
			if tt.afterRead != nil {
				tt.afterRead()
			}
			afterApply = tt.afterApply
			out, err := applier.Write(ctx, tt.desired(), live)
			g.Expect(afterApply).To(BeNil(), "the other controller's write was made")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Rejected).NotTo(HaveOccurred())
			g.Expect(out.Stale).To(BeFalse())
			g.Expect(out.Action).To(Equal(apply.Updated))
			g.Expect(taken()).To(Equal(tt.requests))
			live = cached(g, base, tt.desired, key)
			tt.restored(g, live)

			out, err = applier.Write(ctx, tt.desired(), live)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Action).To(Equal(apply.Unchanged))
			g.Expect(taken()).To(BeEmpty())
		})
	}

	t.Run("deleted after the read", func(t *testing.T) {
		g := NewWithT(t)
		key := client.ObjectKey{Namespace: ns, Name: "web"}
		live := cached(g, base, deployment, key)
		g.Expect(base.Delete(ctx, deployment(), client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		desired := deployment()
		desired.(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](2)
		out, err := applier.Write(ctx, desired, live)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Stale).To(BeTrue(), "the apply must be refused: %+v", out)
		g.Expect(taken()).To(Equal([]string{"apply"}))
		g.Expect(apierrors.IsNotFound(base.Get(ctx, key, &appsv1.Deployment{}))).To(BeTrue(), "nothing is created in its place")
	})
}

// cached reads the child at key as the operator's cache holds it.
func cached(g Gomega, c client.Client, desired func() client.Object, key client.ObjectKey) client.Object {
	live := desired()
	g.Expect(c.Get(context.Background(), key, live)).To(Succeed())
	out, err := apply.ManagedFieldsTransform()(live)
	g.Expect(err).NotTo(HaveOccurred())
	return out.(client.Object)
}
