package apply

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func svc(mutate func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": "1"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Application", Name: "web", UID: "u", Controller: new(true)}}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func TestInSync(t *testing.T) {
	tests := []struct {
		name string
		live *corev1.Service
		want bool
	}{
		{name: "identical", live: svc(nil), want: true},
		{name: "server-assigned fields are ignored", live: svc(func(s *corev1.Service) {
			s.Spec.ClusterIP = "10.0.0.1"
			s.Spec.Ports[0].Protocol = corev1.ProtocolTCP
			s.Spec.Ports[0].NodePort = 30000
			s.Labels["other"] = "x"
			s.OwnerReferences = append(s.OwnerReferences, metav1.OwnerReference{Kind: "Other", UID: "v"})
		}), want: true},
		{name: "changed value", live: svc(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(81) }), want: false},
		{name: "int and string are different", live: svc(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("80") }), want: false},
		{name: "missing label", live: svc(func(s *corev1.Service) { s.Labels = nil }), want: false},
		{name: "extra list element", live: svc(func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 90})
		}), want: false},
		{name: "owner reference stripped", live: svc(func(s *corev1.Service) { s.OwnerReferences = nil }), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := InSync(svc(nil), tt.live)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

// A key whose value is "" is a value: its removal is drift (found by
// TestDriftedAgreesWithAPIServer: the apply puts the key back).
func TestInSyncEmptyStringValues(t *testing.T) {
	withEmpty := func(s *corev1.Service) {
		s.Labels["track"] = ""
		s.Annotations = map[string]string{"note": ""}
		s.Spec.Selector = map[string]string{"app": "web", "tier": ""}
	}
	tests := []struct {
		name string
		live *corev1.Service
		want bool
	}{
		{name: "all present", live: svc(withEmpty), want: true},
		{name: "label with an empty value removed", live: svc(func(s *corev1.Service) {
			withEmpty(s)
			delete(s.Labels, "track")
		}), want: false},
		{name: "annotation with an empty value removed", live: svc(func(s *corev1.Service) {
			withEmpty(s)
			s.Annotations = nil
		}), want: false},
		{name: "selector key with an empty value removed", live: svc(func(s *corev1.Service) {
			withEmpty(s)
			delete(s.Spec.Selector, "tier")
		}), want: false},
		{name: "empty value changed", live: svc(func(s *corev1.Service) {
			withEmpty(s)
			s.Labels["track"] = "x"
		}), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := InSync(svc(withEmpty), tt.live)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestInSyncQuantitiesCompareCanonically(t *testing.T) {
	g := NewWithT(t)
	pod := func(q string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}}}}}
	}
	ok, err := InSync(pod("0.1"), pod("100m"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
}

func TestSetHashIgnoresPreviousHash(t *testing.T) {
	g := NewWithT(t)
	a, b := svc(nil), svc(nil)
	g.Expect(SetHash(a)).To(Succeed())
	b.Annotations = map[string]string{HashAnnotation: "stale"}
	g.Expect(SetHash(b)).To(Succeed())
	g.Expect(a.Annotations[HashAnnotation]).To(Equal(b.Annotations[HashAnnotation]))
	c := svc(func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 })
	g.Expect(SetHash(c)).To(Succeed())
	g.Expect(c.Annotations[HashAnnotation]).NotTo(Equal(a.Annotations[HashAnnotation]))
}

func TestIsOurs(t *testing.T) {
	marked := func(s *corev1.Service) {
		s.Labels = map[string]string{ManagedByLabel: ManagedByValue}
		s.Annotations = map[string]string{HashAnnotation: "h"}
	}
	tests := []struct {
		name   string
		mutate func(*corev1.Service)
		want   bool
	}{
		{name: "controlled by the owner", want: true},
		{name: "controlled by another owner", mutate: func(s *corev1.Service) {
			marked(s)
			s.OwnerReferences[0].UID = "other"
		}},
		{name: "owner reference stripped, operator's marks kept", mutate: func(s *corev1.Service) {
			marked(s)
			s.OwnerReferences = nil
		}, want: true},
		{name: "no owner, no marks: someone else's", mutate: func(s *corev1.Service) { s.OwnerReferences = nil }},
		{name: "no owner, label but no hash", mutate: func(s *corev1.Service) {
			marked(s)
			s.OwnerReferences, s.Annotations = nil, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(IsOurs(svc(tt.mutate), "u")).To(Equal(tt.want))
		})
	}
}
