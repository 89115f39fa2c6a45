/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// validApp returns an Application every rule accepts.
func validApp() *sunappsv1.Application {
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: sunappsv1.ApplicationSpec{
			Deployment: sunappsv1.DeploymentTemplate{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
				},
			},
			Service: sunappsv1.ServiceTemplate{ServiceSpec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{{Name: "http", Port: 80}},
			}},
		},
	}
}

// fieldErr is the part of a field.Error a test checks.
type fieldErr struct {
	Type  field.ErrorType
	Field string
}

func fieldErrs(errs field.ErrorList) []fieldErr {
	if len(errs) == 0 {
		return nil
	}
	out := make([]fieldErr, 0, len(errs))
	for _, e := range errs {
		out = append(out, fieldErr{Type: e.Type, Field: e.Field})
	}
	return out
}

func TestValidateApplication(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*sunappsv1.Application)
		want   []fieldErr
	}{
		{name: "valid"},
		{name: "no selector, any labels", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Selector = nil
			a.Spec.Deployment.Template.Labels = map[string]string{"x": "y"}
		}},
		{name: "template labels contradict the selector", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Template.Labels["app"] = "other"
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.deployment.template.metadata.labels"}}},
		{name: "template labels miss a selector expression", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.deployment.template.metadata.labels"}}},
		{name: "malformed selector", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.deployment.selector.matchExpressions[0].operator"}}},
		{name: "malformed template label", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Template.Labels["bad key!"] = "x"
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.deployment.template.metadata.labels"}}},
		{name: "negative replicas", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Replicas = new(int32(-72))
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.deployment.replicas"}}},
		{name: "no container", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Template.Spec.Containers = nil
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.deployment.template.spec.containers"}}},
		{name: "duplicate container name", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Template.Spec.Containers = append(a.Spec.Deployment.Template.Spec.Containers, corev1.Container{Name: "web", Image: "busybox"})
		}, want: []fieldErr{{field.ErrorTypeDuplicate, "spec.deployment.template.spec.containers[1].name"}}},
		{name: "container without name or image", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Template.Spec.Containers[0] = corev1.Container{}
		}, want: []fieldErr{
			{field.ErrorTypeRequired, "spec.deployment.template.spec.containers[0].name"},
			{field.ErrorTypeRequired, "spec.deployment.template.spec.containers[0].image"},
		}},
		{name: "container name not a DNS label", mutate: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Template.Spec.Containers[0].Name = "Web_1"
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.deployment.template.spec.containers[0].name"}}},
		{name: "port zero", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].Port = 0
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.service.ports[0].port"}}},
		{name: "port too large", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].Port = 65536
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.service.ports[0].port"}}},
		{name: "second port without name", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports = append(a.Spec.Service.Ports, corev1.ServicePort{Port: 9090})
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.service.ports[1].name"}}},
		{name: "one port may have no name", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].Name = ""
		}},
		{name: "duplicate port name", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports = append(a.Spec.Service.Ports, corev1.ServicePort{Name: "http", Port: 8080})
		}, want: []fieldErr{{field.ErrorTypeDuplicate, "spec.service.ports[1].name"}}},
		{name: "duplicate port and protocol", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports = append(a.Spec.Service.Ports, corev1.ServicePort{Name: "other", Port: 80, Protocol: corev1.ProtocolTCP})
		}, want: []fieldErr{{field.ErrorTypeDuplicate, "spec.service.ports[1]"}}},
		{name: "same port, other protocol", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports = append(a.Spec.Service.Ports, corev1.ServicePort{Name: "dns", Port: 80, Protocol: corev1.ProtocolUDP})
		}},
		{name: "unsupported protocol", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].Protocol = "ICMP"
		}, want: []fieldErr{{field.ErrorTypeNotSupported, "spec.service.ports[0].protocol"}}},
		{name: "port name not a DNS label", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].Name = "HTTP"
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.service.ports[0].name"}}},
		{name: "target port out of range", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].TargetPort = intstr.FromInt32(70000)
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.service.ports[0].targetPort"}}},
		{name: "target port bad name", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].TargetPort = intstr.FromString("not_a-name")
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.service.ports[0].targetPort"}}},
		{name: "nodePort on a ClusterIP Service", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].NodePort = 30080
		}, want: []fieldErr{{field.ErrorTypeForbidden, "spec.service.ports[0].nodePort"}}},
		{name: "nodePort on a NodePort Service", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Type = corev1.ServiceTypeNodePort
			a.Spec.Service.Ports[0].NodePort = 30080
		}},
		// The cluster's --service-node-port-range is the API server's to
		// judge: clusters configure ranges such as 80-32767 or 20000-22767.
		{name: "nodePort below the default node port range", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Type = corev1.ServiceTypeLoadBalancer
			a.Spec.Service.Ports[0].NodePort = 8080
		}},
		{name: "nodePort above the default node port range", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Type = corev1.ServiceTypeNodePort
			a.Spec.Service.Ports[0].NodePort = 40000
		}},
		{name: "nodePort not a port number", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Type = corev1.ServiceTypeNodePort
			a.Spec.Service.Ports[0].NodePort = 70000
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.service.ports[0].nodePort"}}},
		{name: "nodePort negative", mutate: func(a *sunappsv1.Application) {
			a.Spec.Service.Type = corev1.ServiceTypeNodePort
			a.Spec.Service.Ports[0].NodePort = -1
		}, want: []fieldErr{{field.ErrorTypeInvalid, "spec.service.ports[0].nodePort"}}},
		{name: "deployment at its bound", mutate: padDeployment(sunappsv1.MaxDeploymentBytes)},
		{name: "deployment beyond its bound", mutate: padDeployment(sunappsv1.MaxDeploymentBytes + 1),
			want: []fieldErr{{field.ErrorTypeTooLong, "spec.deployment"}}},
		{name: "service at its bound", mutate: padService(sunappsv1.MaxServiceBytes)},
		{name: "service beyond its bound, other rules unchecked", mutate: func(a *sunappsv1.Application) {
			padService(sunappsv1.MaxServiceBytes + 1)(a)
			a.Spec.Deployment.Template.Spec.Containers = nil
		}, want: []fieldErr{{field.ErrorTypeTooLong, "spec.service"}}},
		{name: "both beyond their bounds", mutate: func(a *sunappsv1.Application) {
			padDeployment(sunappsv1.MaxDeploymentBytes + 1)(a)
			padService(sunappsv1.MaxServiceBytes + 1)(a)
		}, want: []fieldErr{{field.ErrorTypeTooLong, "spec.deployment"}, {field.ErrorTypeTooLong, "spec.service"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := validApp()
			if tt.mutate != nil {
				tt.mutate(app)
			}
			NewWithT(t).Expect(fieldErrs(validateApplication(app))).To(Equal(tt.want))
		})
	}
}

func TestValidateApplicationUpdate(t *testing.T) {
	derived := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	tests := []struct {
		name     string
		old, new *metav1.LabelSelector
		want     []fieldErr
	}{
		{name: "unchanged", old: derived, new: derived},
		{name: "set where there was none", old: nil, new: derived},
		{name: "set where it was empty", old: &metav1.LabelSelector{}, new: derived},
		{name: "changed", old: derived, new: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "v": "2"}},
			want: []fieldErr{
				{field.ErrorTypeInvalid, "spec.deployment.selector"},
				{field.ErrorTypeInvalid, "spec.deployment.template.metadata.labels"},
			}},
		{name: "removed", old: derived, new: nil, want: []fieldErr{{field.ErrorTypeInvalid, "spec.deployment.selector"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, app := validApp(), validApp()
			old.Spec.Deployment.Selector = tt.old
			app.Spec.Deployment.Selector = tt.new
			app.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:2"
			NewWithT(t).Expect(fieldErrs(validateApplicationUpdate(old, app))).To(Equal(tt.want))
		})
	}
}

func TestUnchangedSpecPassesUpdate(t *testing.T) {
	old := validApp()
	old.Spec.Deployment.Template.Spec.Containers = nil // stored before the rule existed
	app := old.DeepCopy()
	app.Finalizers = []string{"example.com/cleanup"}
	NewWithT(t).Expect(validateApplicationUpdate(old, app)).To(BeEmpty())
}

// padDeployment makes spec.deployment exactly size bytes of JSON with one
// environment variable.
func padDeployment(size int) func(*sunappsv1.Application) {
	return func(a *sunappsv1.Application) {
		c := &a.Spec.Deployment.Template.Spec.Containers[0]
		c.Env = []corev1.EnvVar{{Name: "PAD", Value: "x"}}
		c.Env[0].Value = strings.Repeat("x", size-jsonSize(&a.Spec.Deployment)+1)
	}
}

// padService makes spec.service exactly size bytes of JSON with one
// selector entry.
func padService(size int) func(*sunappsv1.Application) {
	return func(a *sunappsv1.Application) {
		a.Spec.Service.Selector = map[string]string{"pad": ""}
		a.Spec.Service.Selector["pad"] = strings.Repeat("x", size-jsonSize(&a.Spec.Service))
	}
}

func jsonSize(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return len(data)
}

// The refusal names the field, its size and the bound, and does not echo
// the value.
func TestValidateSizesMessage(t *testing.T) {
	g := NewWithT(t)
	app := validApp()
	padDeployment(sunappsv1.MaxDeploymentBytes + 10)(app)
	errs := validateApplication(app)
	g.Expect(errs).To(HaveLen(1))
	g.Expect(errs[0].Error()).To(Equal(fmt.Sprintf(
		"spec.deployment: Too long: is %d bytes as JSON, may not be more than %d bytes (the operator copies it into the Application's children)",
		sunappsv1.MaxDeploymentBytes+10, sunappsv1.MaxDeploymentBytes)))
}
