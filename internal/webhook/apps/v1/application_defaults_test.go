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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
)

func TestDefaultApplication(t *testing.T) {
	derived := &metav1.LabelSelector{MatchLabels: map[string]string{appscontroller.ApplicationLabel: "web"}}
	user := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	bare := func(selector *metav1.LabelSelector, labels map[string]string) *sunappsv1.Application {
		app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
		app.Spec.Deployment.Selector = selector
		app.Spec.Deployment.Template.Labels = labels
		return app
	}
	tests := []struct {
		name         string
		app, old     *sunappsv1.Application
		wantSelector *metav1.LabelSelector
		wantLabels   map[string]string
	}{
		{name: "create without selector derives it", app: bare(nil, nil),
			wantSelector: derived, wantLabels: derived.MatchLabels},
		{name: "create with an empty selector derives it", app: bare(&metav1.LabelSelector{}, map[string]string{"x": "y"}),
			wantSelector: derived, wantLabels: map[string]string{"x": "y", appscontroller.ApplicationLabel: "web"}},
		{name: "create keeps the user's selector", app: bare(user, nil),
			wantSelector: user, wantLabels: user.MatchLabels},
		{name: "create keeps a contradicting label for validation", app: bare(user, map[string]string{"app": "db"}),
			wantSelector: user, wantLabels: map[string]string{"app": "db"}},
		{name: "update without selector keeps none when none was stored", app: bare(nil, nil), old: bare(nil, nil)},
		{name: "update without selector keeps the stored one", app: bare(nil, nil), old: bare(user, nil),
			wantSelector: user, wantLabels: user.MatchLabels},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			defaultApplication(tt.app, tt.old)
			g.Expect(tt.app.Spec.Deployment.Selector).To(Equal(tt.wantSelector))
			g.Expect(tt.app.Spec.Deployment.Template.Labels).To(Equal(tt.wantLabels))
			g.Expect(tt.app.Spec.Deployment.Replicas).To(Equal(ptr.To[int32](1)))
		})
	}
}

func TestDefaultApplicationDoesNotShareTheSelectorMaps(t *testing.T) {
	g := NewWithT(t)
	old := &sunappsv1.Application{}
	old.Spec.Deployment.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	app := &sunappsv1.Application{}
	defaultApplication(app, old)
	app.Spec.Deployment.Template.Labels["extra"] = "x"
	app.Spec.Deployment.Selector.MatchLabels["app"] = "changed"
	g.Expect(old.Spec.Deployment.Selector.MatchLabels).To(Equal(map[string]string{"app": "web"}))
}

func TestDefaultServicePorts(t *testing.T) {
	g := NewWithT(t)
	app := &sunappsv1.Application{}
	app.Spec.Deployment.Replicas = ptr.To[int32](3)
	app.Spec.Service.Ports = []corev1.ServicePort{
		{Name: "http", Port: 80},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")},
	}
	defaultApplication(app, nil)
	g.Expect(app.Spec.Service.Ports).To(Equal([]corev1.ServicePort{
		{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")},
	}))
	g.Expect(app.Spec.Deployment.Replicas).To(Equal(ptr.To[int32](3)), "a set replicas is kept")
	g.Expect(app.Spec.Deployment.Selector).To(BeNil(), "no name, no derived selector")
}
