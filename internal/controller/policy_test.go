package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"sunstrider.cn/operator/internal/apply"
)

// Each row of Policy is what the code does: the answer of the API server
// a row names, met by a child's deletion (or, for a conflict, by a read),
// gives Ready the row's reason and the reconcile the row's retry.
func TestEveryPolicyRowIsWhatTheCodeDoes(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	answers := map[Answer]error{
		AnswerApplied: nil,
		AnswerInvalid: apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "c",
			field.ErrorList{field.Invalid(field.NewPath("data"), 1, "bad")}),
		AnswerRefused:     apierrors.NewForbidden(gr, "c", errors.New("denied by policy")),
		AnswerStale:       apierrors.NewConflict(gr, "c", errors.New("Precondition failed: UID in precondition")),
		AnswerUnreachable: apierrors.NewServiceUnavailable("etcd is down"),
	}
	const recheck = time.Minute
	for _, row := range Policy {
		t.Run(string(row.Answer), func(t *testing.T) {
			g := NewWithT(t)
			var deleteErr error
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error { return deleteErr },
			}).Build()
			parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "parent", UID: "p"}}
			children := NewChildren(c, c, &apply.Memory{}, parent, "Parent")
			child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "c"}}

			var err error
			if row.Answer == AnswerConflict {
				children.Conflicts = append(children.Conflicts, "ConfigMap ns/c (it has no controller)")
			} else {
				deleteErr = answers[row.Answer]
				err = children.Delete(context.Background(), child, "test")
			}
			if row.Answer == AnswerUnreachable {
				g.Expect(err).To(HaveOccurred(), "the phase returns it")
				g.Expect(children.Answer()).To(Equal(AnswerApplied), "nothing recorded: the status is left as it was")
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(children.Answer()).To(Equal(row.Answer))
			reason, _, ok := children.NotReady()
			g.Expect(reason).To(Equal(row.Reason))
			g.Expect(ok).To(Equal(row.Reason != ""))

			result, err := children.Result(0, recheck)
			switch row.Retry {
			case RetryBackoff:
				g.Expect(err).To(HaveOccurred(), "a returned error is retried with backoff")
			case RetryRecheck:
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(result.RequeueAfter).To(Equal(recheck))
			case RetryOnEvent:
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(result.RequeueAfter).To(BeZero())
			}
			g.Expect(children.StopsPhases()).To(Equal(row.Answer == AnswerConflict || row.Answer == AnswerStale))
		})
	}
}

func TestPolicyCoversEveryAnswer(t *testing.T) {
	for _, a := range []Answer{AnswerApplied, AnswerConflict, AnswerInvalid, AnswerRefused, AnswerStale, AnswerUnreachable} {
		r := RuleOf(a)
		if (r.Reason == "") != (r.Class == 0) {
			t.Errorf("%s: a reason needs a class and a class a reason: %+v", a, r)
		}
	}
}

func TestAnswerOf(t *testing.T) {
	gr := schema.GroupResource{Resource: "services"}
	tests := []struct {
		err  error
		want Answer
	}{
		{apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "x", field.ErrorList{field.Invalid(field.NewPath("spec"), 1, "bad")}), AnswerInvalid},
		{apierrors.NewBadRequest("bad"), AnswerInvalid},
		{apierrors.NewForbidden(gr, "x", errors.New("quota")), AnswerRefused},
		{apierrors.NewConflict(gr, "x", errors.New("admission")), AnswerRefused},
	}
	for _, tt := range tests {
		if got := AnswerOf(tt.err); got != tt.want {
			t.Errorf("AnswerOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
