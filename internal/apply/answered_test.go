package apply

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAnswered(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "conflict", err: apierrors.NewConflict(gr, "a", errors.New("changed")), want: true},
		{name: "wrapped invalid", err: fmt.Errorf("applying Deployment: %w", apierrors.NewInvalid(
			schema.GroupKind{Group: "apps", Kind: "Deployment"}, "a", nil)), want: true},
		{name: "forbidden by a webhook", err: apierrors.NewForbidden(gr, "a", errors.New("denied by policy")), want: true},
		{name: "quota", err: apierrors.NewForbidden(gr, "a", errors.New("exceeded quota: q")), want: true},
		{name: "connection refused", err: fmt.Errorf("applying Deployment: %w",
			&url.Error{Op: "Patch", URL: "https://127.0.0.1:6443", Err: syscall.ECONNREFUSED}), want: false},
		{name: "deadline", err: context.DeadlineExceeded, want: false},
		{name: "too many requests", err: apierrors.NewTooManyRequests("slow down", 1), want: false},
		{name: "server timeout", err: apierrors.NewServerTimeout(gr, "patch", 1), want: false},
		{name: "service unavailable", err: apierrors.NewServiceUnavailable("starting"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(Answered(tt.err)).To(Equal(tt.want))
		})
	}
}

func TestRefusalMessage(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	err := fmt.Errorf("wrapped: %w", apierrors.NewForbidden(gr, "web", errors.New(`admission webhook "policy.example.com" denied the request: no latest tags`)))
	NewWithT(t).Expect(RefusalMessage("Deployment", err)).To(Equal(
		`The API server refused the Deployment: deployments.apps "web" is forbidden: ` +
			`admission webhook "policy.example.com" denied the request: no latest tags`))
}

func TestApplyConfiguration(t *testing.T) {
	g := NewWithT(t)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", ResourceVersion: "7"},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		},
		Status: appsv1.DeploymentStatus{Replicas: 2},
	}
	cfg, err := applyConfiguration(d)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Object).NotTo(HaveKey("status"))
	g.Expect(cfg.GetResourceVersion()).To(BeEmpty())
	g.Expect(cfg.Object["metadata"]).NotTo(HaveKey("creationTimestamp"))
	tmpl := cfg.Object["spec"].(map[string]any)["template"].(map[string]any)
	g.Expect(tmpl["metadata"]).NotTo(HaveKey("creationTimestamp"))
	g.Expect(cfg.GetKind()).To(Equal("Deployment"))
	replicas, _, _ := unstructured.NestedInt64(cfg.Object, "spec", "replicas")
	g.Expect(replicas).To(Equal(int64(3)))
}
