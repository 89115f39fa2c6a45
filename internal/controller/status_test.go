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

package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStatusMergePatchIsControllerRuntimesForAStatusChange: the status
// patch is, byte for byte, controller-runtime's MergeFromWithOptimisticLock
// of the whole objects, whatever changes in the status (a Deployment's
// status stands for any kind's).
func TestStatusMergePatchIsControllerRuntimesForAStatusChange(t *testing.T) {
	status := func(o client.Object) any { return &o.(*appsv1.Deployment).Status }
	orig := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", ResourceVersion: "41", Labels: map[string]string{"app": "web"}},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 1, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
		}},
	}
	cases := []struct {
		name   string
		change func(*appsv1.DeploymentStatus)
	}{
		{name: "nothing", change: func(*appsv1.DeploymentStatus) {}},
		{name: "a counter", change: func(s *appsv1.DeploymentStatus) { s.ReadyReplicas = 2 }},
		{name: "a counter cleared", change: func(s *appsv1.DeploymentStatus) { s.ReadyReplicas = 0 }},
		{name: "a condition changed", change: func(s *appsv1.DeploymentStatus) {
			s.Conditions[0].Status, s.Conditions[0].Reason = corev1.ConditionTrue, "MinimumReplicasAvailable"
		}},
		{name: "a condition added", change: func(s *appsv1.DeploymentStatus) {
			s.Conditions = append(s.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue})
		}},
		{name: "the conditions removed", change: func(s *appsv1.DeploymentStatus) { s.Conditions = nil }},
		{name: "the whole status cleared", change: func(s *appsv1.DeploymentStatus) { *s = appsv1.DeploymentStatus{} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := orig.DeepCopy()
			c.change(&obj.Status)
			patch, err := statusMergeFrom(orig, status)
			if err != nil {
				t.Fatal(err)
			}
			got, err := patch.Data(obj)
			if err != nil {
				t.Fatal(err)
			}
			want, err := client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}).Data(obj)
			if err != nil {
				t.Fatal(err)
			}
			if patch.Type() != client.MergeFrom(orig).Type() {
				t.Fatalf("patch type %s, want %s", patch.Type(), client.MergeFrom(orig).Type())
			}
			if string(got) != string(want) {
				t.Fatalf("patch\n  %s\nwant controller-runtime's\n  %s", got, want)
			}
		})
	}
}
