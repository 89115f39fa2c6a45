package apply_test

import (
	"context"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
)

// TestWriteAnswersAreTyped: the apply that creates a child and the one
// that restores it are answered as protobuf (a built-in kind), decoded
// straight into the child's type: Outcome.Live is the child as written,
// its kind set, with the operator's managedFields.
func TestWriteAnswersAreTyped(t *testing.T) {
	base := apiServer(t)
	// answers records the content type of the API server's answers to
	// server-side applies.
	answers := &requestLog{}
	cfg := rest.CopyConfig(controlPlane.cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return testutil.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err == nil && req.Header.Get("Content-Type") == string(types.ApplyPatchType) {
				answers.record(resp.Header.Get("Content-Type"))
			}
			return resp, err
		})
	})
	applier := &apply.Applier{Client: newClient(t, cfg), APIReader: base}
	ctx := t.Context()
	g := NewWithT(t)
	const ns = "typed-answers"
	g.Expect(base.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "web"}

	out, err := applier.Write(ctx, ownedDeployment(key), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Action).To(Equal(apply.Created))
	g.Expect(answers.taken()).To(Equal([]string{runtime.ContentTypeProtobuf}))
	checkWritten(g, base, key, out.Live, "nginx:1.27")

	desired := ownedDeployment(key).(*appsv1.Deployment)
	desired.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	out, err = applier.Write(ctx, desired, out.Live)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Action).To(Equal(apply.Updated))
	g.Expect(answers.taken()).To(Equal([]string{runtime.ContentTypeProtobuf}))
	checkWritten(g, base, key, out.Live, "nginx:1.28")
}

// checkWritten checks that written, an Outcome's Live, is the Deployment
// at key as the API server holds it, with image.
func checkWritten(g Gomega, c client.Client, key client.ObjectKey, written client.Object, image string) {
	g.Expect(written).To(BeAssignableToTypeOf(&appsv1.Deployment{}))
	d := written.(*appsv1.Deployment)
	g.Expect(d.GroupVersionKind()).To(Equal(appsv1.SchemeGroupVersion.WithKind("Deployment")))
	stored := &appsv1.Deployment{}
	g.Expect(c.Get(context.Background(), key, stored)).To(Succeed())
	g.Expect(d.ResourceVersion).To(Equal(stored.ResourceVersion))
	g.Expect(d.UID).To(Equal(stored.UID))
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
	g.Expect(operatorEntries(d)).To(HaveLen(1))
	g.Expect(operatorEntries(d)[0].Operation).To(Equal(metav1.ManagedFieldsOperationApply))
}
