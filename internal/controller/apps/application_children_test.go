package apps

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
)

func TestApplicationSelector(t *testing.T) {
	derived := &metav1.LabelSelector{MatchLabels: map[string]string{ApplicationLabel: "web"}}
	user := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
	other := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	existing := func(s *metav1.LabelSelector) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: s}}
	}
	tests := []struct {
		name      string
		requested *metav1.LabelSelector
		existing  *appsv1.Deployment
		want      *metav1.LabelSelector
		wantErr   error
	}{
		{name: "none requested, no Deployment: derived from the name", want: derived},
		{name: "empty selector counts as none", requested: &metav1.LabelSelector{}, want: derived},
		{name: "requested, no Deployment", requested: user, want: user},
		{name: "existing Deployment wins over derivation", existing: existing(user), want: user},
		{name: "requested equals existing", requested: user, existing: existing(user), want: user},
		{name: "requested differs from existing", requested: other, existing: existing(user), want: user, wantErr: errSelectorImmutable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
			app.Spec.Deployment.Selector = tt.requested
			got, err := applicationSelector(app, tt.existing)
			if tt.wantErr != nil {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func testApp() *sunappsv1.Application {
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1", Labels: map[string]string{"team": "a"}},
		Spec: sunappsv1.ApplicationSpec{
			Deployment: sunappsv1.DeploymentTemplate{
				Replicas: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "wrong", "extra": "x"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
				},
			},
		},
	}
}

func TestDesiredDeployment(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
	tests := []struct {
		name       string
		mutate     func(*sunappsv1.Application)
		wantLabels map[string]string
	}{
		{name: "selector labels override and join template labels", wantLabels: map[string]string{"app": "nginx", "extra": "x"}},
		{name: "no template labels at all", mutate: func(a *sunappsv1.Application) { a.Spec.Deployment.Template.Labels = nil },
			wantLabels: map[string]string{"app": "nginx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			app := testApp()
			if tt.mutate != nil {
				tt.mutate(app)
			}
			d := desiredDeployment(app, selector)
			g.Expect(d.Name).To(Equal("web"))
			g.Expect(d.Namespace).To(Equal("ns"))
			g.Expect(d.Spec.Template.Labels).To(Equal(tt.wantLabels))
			g.Expect(d.Spec.Selector).To(Equal(selector))
			g.Expect(*d.Spec.Replicas).To(Equal(int32(2)))
			g.Expect(d.Labels).To(Equal(map[string]string{"team": "a", ApplicationLabel: "web", apply.ManagedByLabel: apply.ManagedByValue}))
			g.Expect(d.OwnerReferences).To(HaveLen(1))
			g.Expect(*d.OwnerReferences[0].Controller).To(BeTrue())
			g.Expect(d.OwnerReferences[0].UID).To(BeEquivalentTo("uid-1"))
			// The Application is not modified.
			g.Expect(app.Spec.Deployment.Template.Labels).NotTo(HaveKeyWithValue("app", "nginx"))
		})
	}
}

func TestDesiredService(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
	tests := []struct {
		name         string
		spec         corev1.ServiceSpec
		wantSelector map[string]string
		wantTarget   intstr.IntOrString
	}{
		{name: "selector defaults to the Deployment's, targetPort to port",
			spec:         corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			wantSelector: map[string]string{"app": "nginx"}, wantTarget: intstr.FromInt32(80)},
		{name: "explicit selector and targetPort kept",
			spec:         corev1.ServiceSpec{Selector: map[string]string{"x": "y"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}},
			wantSelector: map[string]string{"x": "y"}, wantTarget: intstr.FromString("http")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			app := testApp()
			app.Spec.Service.ServiceSpec = tt.spec
			s := desiredService(app, selector)
			g.Expect(s.Spec.Selector).To(Equal(tt.wantSelector))
			g.Expect(s.Spec.Ports[0].TargetPort).To(Equal(tt.wantTarget))
			g.Expect(metav1.IsControlledBy(s, app)).To(BeTrue())
		})
	}
}

func TestWantsService(t *testing.T) {
	g := NewWithT(t)
	app := testApp()
	g.Expect(wantsService(app)).To(BeFalse())
	app.Spec.Service.Type = corev1.ServiceTypeNodePort
	g.Expect(wantsService(app)).To(BeFalse(), "a type without ports is no Service")
	app.Spec.Service.Ports = []corev1.ServicePort{{Port: 80}}
	g.Expect(wantsService(app)).To(BeTrue())
}
