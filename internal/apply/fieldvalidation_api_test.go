package apply_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"sunstrider.cn/operator/internal/apply"
)

// TestApplyRefusesUnknownFieldsWithoutStrictDecoding: the Applier's
// applies ask for no strict decoding (fieldValidation=Ignore), and the API
// server still refuses an apply with a field its kind does not have: the
// directive only spares the second decoding, which looks for duplicate
// fields, and encoding/json writes none.
func TestApplyRefusesUnknownFieldsWithoutStrictDecoding(t *testing.T) {
	base := apiServer(t)
	ctx := t.Context()
	g := NewWithT(t)
	const ns = "field-validation"
	g.Expect(base.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	unknown := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unknown","namespace":"` + ns +
		`"},"data":{"a":"b"},"spec":{"replicas":1}}`)
	err := base.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unknown", Namespace: ns}},
		client.RawPatch(types.ApplyPatchType, unknown), client.FieldOwner(apply.FieldOwner),
		client.FieldValidation(metav1.FieldValidationIgnore))
	g.Expect(err).To(MatchError(ContainSubstring(".spec: field not declared in schema")))
	g.Expect(apierrors.IsNotFound(base.Get(ctx, client.ObjectKey{Namespace: ns, Name: "unknown"}, &corev1.ConfigMap{}))).
		To(BeTrue(), "the refused apply created the ConfigMap")

	var directives []string
	counted := interceptor.NewClient(base, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if patch.Type() == types.ApplyPatchType {
				o := &client.PatchOptions{}
				o.ApplyOptions(opts)
				directives = append(directives, o.FieldValidation)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	applier := &apply.Applier{Client: counted, APIReader: counted}
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	out, err := applier.Write(ctx, ownedDeployment(key), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Action).To(Equal(apply.Created))
	live := &appsv1.Deployment{}
	g.Expect(base.Get(ctx, key, live)).To(Succeed())
	changed := ownedDeployment(key).(*appsv1.Deployment)
	changed.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	out, err = applier.Write(ctx, changed, live)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Action).To(Equal(apply.Updated))
	g.Expect(directives).To(Equal([]string{metav1.FieldValidationIgnore, metav1.FieldValidationIgnore}))
}
