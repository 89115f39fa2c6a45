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

package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestApplicationConformance runs the behaviour every kind with a child
// shares (testutil.Conformance) against the Application and its Deployment
// (an Application without a Service, whose only child it is), in one
// namespace. Its Restart case runs noWritesAtSteadyState too.
func TestApplicationConformance(t *testing.T) {
	ns := testutil.Namespace(t, suite.Client)
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: "apps-application",
		New: func(name string) client.Object {
			return &sunappsv1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: sunappsv1.ApplicationSpec{Deployment: sunappsv1.DeploymentTemplate{
					Replicas: ptr.To[int32](1),
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
						{Name: "web", Image: "nginx:1.27"},
					}}},
				}},
			}
		},
		Child: func(parent client.Object) (client.ObjectKey, client.Object) {
			return client.ObjectKeyFromObject(parent), &appsv1.Deployment{}
		},
		Foreign: func(key client.ObjectKey) client.Object {
			labels := map[string]string{"app": "theirs"}
			return &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/theirs:1"}}},
					},
				},
			}
		},
		Change: func(parent client.Object) {
			parent.(*sunappsv1.Application).Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:1.28"
		},
		Changed: func(g Gomega, child client.Object) {
			g.Expect(conformanceImage(child)).To(Equal("nginx:1.28"))
		},
		Tamper: func(child client.Object) {
			child.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image = "example.com/tampered:1"
		},
		Field: conformanceImage,
		Reported: func(g Gomega, parent client.Object) {
			app := parent.(*sunappsv1.Application)
			g.Expect(app.Status.Workflow.Replicas).To(Equal(int32(1)))
			g.Expect(app.Status.Workflow.AvailableReplicas).To(Equal(int32(1)))
			g.Expect(app.Status.Selector).NotTo(BeEmpty())
		},
		MakeReady:   conformanceDeploymentAvailable,
		Restarted:   func() { writes = suite.Writes },
		SteadyState: noWritesAtSteadyState,
	})
}

// conformanceImage is the image of the Deployment's first container.
func conformanceImage(child client.Object) string {
	return child.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image
}

// conformanceDeploymentAvailable writes, through the status subresource,
// the status the Deployment controller (which envtest does not run) would
// report once every replica of the Application's Deployment is available.
func conformanceDeploymentAvailable(g Gomega, app client.Object) {
	d := &appsv1.Deployment{}
	g.Expect(suite.Client.Get(context.Background(), client.ObjectKeyFromObject(app), d)).To(Succeed())
	replicas := ptr.Deref(d.Spec.Replicas, 1)
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
				Message: "ReplicaSet has successfully progressed.", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	g.Expect(suite.Client.Status().Update(context.Background(), d)).To(Succeed())
}
