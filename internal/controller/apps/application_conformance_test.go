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
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestApplicationConformance runs the behaviour every kind shares
// (testutil.Conformance) against the Application and each of its children,
// in one namespace: its Deployment, its Service (it has a port), its
// PodDisruptionBudget (spec.disruptionBudget) and its
// HorizontalPodAutoscaler (spec.autoscaling); its ControllerRevisions and
// HTTPRoute are declared Unadapted, with why. Its Restart case runs
// noWritesAtSteadyState too.
func TestApplicationConformance(t *testing.T) {
	ns := testutil.Namespace(t, suite.Client)
	sameName := func(parent client.Object) client.ObjectKey { return client.ObjectKeyFromObject(parent) }
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: ControllerName,
		New: func(name string) client.Object {
			return &sunappsv1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: sunappsv1.ApplicationSpec{
					Deployment: sunappsv1.DeploymentTemplate{
						Replicas: ptr.To[int32](1),
						Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
							{Name: "web", Image: "nginx:1.27"},
						}}},
					},
					Service: sunappsv1.ServiceTemplate{ServiceSpec: corev1.ServiceSpec{
						Ports: []corev1.ServicePort{{Port: 80}},
					}},
					DisruptionBudget: &sunappsv1.DisruptionBudget{MinAvailable: new(intstr.FromInt32(1))},
					Autoscaling:      &sunappsv1.Autoscaling{MinReplicas: ptr.To[int32](1), MaxReplicas: 3},
				},
			}
		},
		Children: []testutil.ConformanceChild{{
			Kind: "Deployment",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return sameName(parent), &appsv1.Deployment{}
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
		}, {
			Kind: "Service",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return sameName(parent), &corev1.Service{}
			},
			Foreign: func(key client.ObjectKey) client.Object {
				return &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
					Spec: corev1.ServiceSpec{
						Selector: map[string]string{"app": "theirs"},
						Ports:    []corev1.ServicePort{{Port: 8443}},
					},
				}
			},
			Change: func(parent client.Object) {
				parent.(*sunappsv1.Application).Spec.Service.Ports[0].Port = 8080
			},
			Changed: func(g Gomega, child client.Object) {
				g.Expect(child.(*corev1.Service).Spec.Ports).To(ConsistOf(HaveField("Port", int32(8080))))
			},
			Tamper: func(child client.Object) {
				child.(*corev1.Service).Spec.Ports[0].TargetPort = intstr.FromInt32(9999)
			},
			Field: func(child client.Object) string { return child.(*corev1.Service).Spec.Ports[0].TargetPort.String() },
			Reported: func(g Gomega, parent client.Object) {
				g.Expect(parent.(*sunappsv1.Application).Status.ClusterIP).NotTo(BeEmpty())
			},
		}, {
			// The status mirrors nothing of it: no Reported.
			Kind: "PodDisruptionBudget",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return sameName(parent), &policyv1.PodDisruptionBudget{}
			},
			Foreign: func(key client.ObjectKey) client.Object {
				return &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
					Spec: policyv1.PodDisruptionBudgetSpec{
						Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}},
						MinAvailable: new(intstr.FromInt32(2)),
					},
				}
			},
			Change: func(parent client.Object) {
				parent.(*sunappsv1.Application).Spec.DisruptionBudget.MinAvailable = new(intstr.FromString("50%"))
			},
			Changed: func(g Gomega, child client.Object) {
				g.Expect(conformanceMinAvailable(child)).To(Equal("50%"))
			},
			Tamper: func(child client.Object) {
				child.(*policyv1.PodDisruptionBudget).Spec.MinAvailable = new(intstr.FromInt32(5))
			},
			Field: conformanceMinAvailable,
		}, {
			// The status mirrors nothing of it: no Reported.
			Kind: "HorizontalPodAutoscaler",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return sameName(parent), &autoscalingv2.HorizontalPodAutoscaler{}
			},
			Foreign: func(key client.ObjectKey) client.Object {
				return &autoscalingv2.HorizontalPodAutoscaler{
					ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
					Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
						ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "theirs"},
						MaxReplicas:    2,
					},
				}
			},
			Change: func(parent client.Object) { parent.(*sunappsv1.Application).Spec.Autoscaling.MaxReplicas = 4 },
			Changed: func(g Gomega, child client.Object) {
				g.Expect(child.(*autoscalingv2.HorizontalPodAutoscaler).Spec.MaxReplicas).To(Equal(int32(4)))
			},
			Tamper: func(child client.Object) { child.(*autoscalingv2.HorizontalPodAutoscaler).Spec.MaxReplicas = 9 },
			Field: func(child client.Object) string {
				return fmt.Sprint(child.(*autoscalingv2.HorizontalPodAutoscaler).Spec.MaxReplicas)
			},
		}},
		Unadapted: []testutil.UnadaptedChild{{
			Child: &appsv1.ControllerRevision{},
			Why: "a history, not one child kept as the spec says: none exists before the Pod template's first " +
				"change, then one per template rolled out, named by its hash, its data immutable, the oldest " +
				"deleted past revisionHistoryLimit (TestRevisionsFollowTheTemplate)",
		}, {
			Child: &gatewayv1.HTTPRoute{},
			Why: "made only for a spec.route once the Gateway API's CRDs are installed, which the suite does in " +
				"TestRouteWithoutThenWithTheGatewayAPI after it showed an Application without them",
		}},
		MakeReady:   conformanceDeploymentAvailable,
		Restarted:   func() { writes = suite.Writes },
		SteadyState: noWritesAtSteadyState,
	})
}

// conformanceMinAvailable is the PodDisruptionBudget's minAvailable.
func conformanceMinAvailable(child client.Object) string {
	return child.(*policyv1.PodDisruptionBudget).Spec.MinAvailable.String()
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
