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
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

func TestApplicationAccess(t *testing.T) {
	deployments := []string{"create deployments.apps in namespace team-a", "update deployments.apps in namespace team-a"}
	services := []string{"create services in namespace team-a", "update services in namespace team-a"}
	budgets := []string{"create poddisruptionbudgets.policy in namespace team-a",
		"update poddisruptionbudgets.policy in namespace team-a"}
	ports := []corev1.ServicePort{{Port: 80}}
	budget := &sunappsv1.DisruptionBudget{MaxUnavailable: new(intstr.FromInt32(1))}
	autoscaling := &sunappsv1.Autoscaling{MaxReplicas: 3}
	for _, tc := range []struct {
		name string
		// old is the Application before an update; nil on create.
		old  *sunappsv1.ApplicationSpec
		spec sunappsv1.ApplicationSpec
		want []string
	}{
		{name: "no ports: the Deployment only", want: deployments},
		{name: "ports: the Service too", spec: spec(ports, nil), want: slices.Concat(deployments, services)},
		{name: "a disruption budget: the PodDisruptionBudget too", spec: spec(nil, budget),
			want: slices.Concat(deployments, budgets)},
		{name: "an update that keeps both", old: new(spec(ports, budget)), spec: spec(ports, budget),
			want: slices.Concat(deployments, services, budgets)},
		{name: "an update that removes the ports deletes the Service", old: new(spec(ports, nil)),
			want: slices.Concat(deployments, []string{"delete services in namespace team-a"})},
		{name: "an update that removes the budget deletes the PodDisruptionBudget", old: new(spec(nil, budget)),
			want: slices.Concat(deployments, []string{"delete poddisruptionbudgets.policy in namespace team-a"})},
		{name: "autoscaling: the HorizontalPodAutoscaler too", spec: sunappsv1.ApplicationSpec{Autoscaling: autoscaling},
			want: slices.Concat(deployments, []string{"create horizontalpodautoscalers.autoscaling in namespace team-a",
				"update horizontalpodautoscalers.autoscaling in namespace team-a"})},
		{name: "a route: the HTTPRoute too", spec: sunappsv1.ApplicationSpec{Route: &sunappsv1.Route{}},
			want: slices.Concat(deployments, []string{"create httproutes.gateway.networking.k8s.io in namespace team-a",
				"update httproutes.gateway.networking.k8s.io in namespace team-a"})},
		{name: "an update that removes the route deletes the HTTPRoute", old: &sunappsv1.ApplicationSpec{Route: &sunappsv1.Route{}},
			want: slices.Concat(deployments, []string{"delete httproutes.gateway.networking.k8s.io in namespace team-a"})},
		{name: "an update that removes autoscaling deletes the HorizontalPodAutoscaler",
			old:  &sunappsv1.ApplicationSpec{Autoscaling: autoscaling},
			want: slices.Concat(deployments, []string{"delete horizontalpodautoscalers.autoscaling in namespace team-a"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}, Spec: tc.spec}
			var old *sunappsv1.Application
			if tc.old != nil {
				old = app.DeepCopy()
				old.Spec = *tc.old
			}
			checks := applicationAccess(old, app)
			got := make([]string, 0, len(checks))
			for _, c := range checks {
				got = append(got, c.String())
			}
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}

func spec(ports []corev1.ServicePort, budget *sunappsv1.DisruptionBudget) sunappsv1.ApplicationSpec {
	s := sunappsv1.ApplicationSpec{DisruptionBudget: budget}
	s.Service.Ports = ports
	return s
}
