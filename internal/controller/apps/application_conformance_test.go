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
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
)

// TestApplicationConformance runs the behaviour every kind shares
// (testutil.Conformance) against the Application and each of its children,
// in one namespace: its Deployment, its Service (it has a port), its
// PodDisruptionBudget (spec.disruptionBudget), its
// HorizontalPodAutoscaler (spec.autoscaling) and its current
// ControllerRevision (each parent's Pod template changed once, Bring). Its
// HTTPRoute has a table of its own, TestRouteConformance, which runs once
// the Gateway API is installed. Its Restart case runs
// noWritesAtSteadyState too.
func TestApplicationConformance(t *testing.T) {
	ns := testutil.Namespace(t, suite.Client)
	sameName := func(parent client.Object) client.ObjectKey { return client.ObjectKeyFromObject(parent) }
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: ControllerName,
		New: func(name string) client.Object {
			return &sunappsv1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
					// Copied onto every child: the revision's ChildChanged.
					Labels: map[string]string{conformanceLabel: "conformance"}},
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
				// The revision of the template it runs (Bring made it the
				// second), not of one its write was refused.
				g.Expect(app.Status.CurrentRevision).To(Equal(int64(2)))
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
		}, {
			// The revision of the template in effect, the only one the
			// operator keeps as it makes it: none exists before the Pod
			// template's first change (Bring makes it), the older ones are
			// a history it renumbers and prunes (TestRevisionsFollowTheTemplate).
			// No Change: a new spec makes a new revision, of another name;
			// its refused writes are the put-backs of ChildChanged.
			Kind: "ControllerRevision",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return conformanceRevisionKey(parent), &appsv1.ControllerRevision{}
			},
			Bring: conformanceChangeTemplate,
			Foreign: func(key client.ObjectKey) client.Object {
				return &appsv1.ControllerRevision{
					ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
					Data:       runtime.RawExtension{Raw: []byte(`{"theirs":true}`)},
					Revision:   1,
				}
			},
			// A label the operator sets (the Application's): the
			// revision's number, since and data are what only the revision
			// holds, which the operator cannot tell from a change.
			Tamper: func(child client.Object) {
				labels := child.GetLabels()
				labels[conformanceLabel] = "tampered"
				child.SetLabels(labels)
			},
			Field: func(child client.Object) string { return child.GetLabels()[conformanceLabel] },
			Reported: func(g Gomega, parent client.Object) {
				st := parent.(*sunappsv1.Application).Status
				g.Expect(st.CurrentRevision).To(Equal(int64(2)))
				g.Expect(st.Revisions).To(HaveLen(2))
				g.Expect(st.Revisions[0].Revision).To(Equal(int64(2)))
				g.Expect(st.Revisions[0].Images).To(Equal([]string{"nginx:1.27"}))
			},
		}},
		MakeReady:   conformanceDeploymentAvailable,
		Restarted:   func() { writes = suite.Writes },
		SteadyState: noWritesAtSteadyState,
	})
}

// conformanceLabel is a label of the conformance's Applications, which
// the operator copies onto their children.
const conformanceLabel = "conformance.sunstrider.cn/label"

// conformanceTemplateChange is the change of the Pod template that brings
// an Application its ControllerRevisions (conformanceChangeTemplate): an
// annotation, so that the image the Deployment's row changes stays as New
// made it.
func conformanceTemplateChange(template *corev1.PodTemplateSpec) {
	if template.Annotations == nil {
		template.Annotations = map[string]string{}
	}
	template.Annotations["conformance.sunstrider.cn/changed"] = "once"
}

// conformanceRevisionKey is the key of the revision of app's template once
// changed (conformanceTemplateChange): the current one.
func conformanceRevisionKey(parent client.Object) client.ObjectKey {
	app := parent.(*sunappsv1.Application).DeepCopy()
	conformanceTemplateChange(&app.Spec.Deployment.Template)
	cr, err := newRevision(app, app.Spec.Deployment.Template, 0, time.Time{}, "")
	if err != nil {
		// Only encoding a Pod template to JSON fails it, which does not.
		panic(err)
	}
	return client.ObjectKeyFromObject(cr)
}

// conformanceChangeTemplate changes the Pod template of app, once its
// Deployment runs the first one: the operator then keeps both as
// ControllerRevisions, the changed one the current.
func conformanceChangeTemplate(g Gomega, app client.Object) {
	ctx := context.Background()
	key := client.ObjectKeyFromObject(app)
	g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(suite.Client.Get(ctx, key, d)).To(Succeed())
		g.Expect(apply.IsControlledBy(d, app.GetUID())).To(BeTrue())
	}).Should(Succeed(), "the Deployment of the first template")
	g.Eventually(func(g Gomega) {
		live := &sunappsv1.Application{}
		g.Expect(suite.Client.Get(ctx, key, live)).To(Succeed())
		conformanceTemplateChange(&live.Spec.Deployment.Template)
		g.Expect(suite.Client.Update(ctx, live)).To(Succeed())
	}).Should(Succeed())
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
// report once every replica of the Application's Deployment is available;
// nothing when it already does: written again a second later, its
// conditions' times would change the Application's status.workflow alone,
// a status write put off (StatusBatch) that the cases wait for.
func conformanceDeploymentAvailable(g Gomega, app client.Object) {
	d := &appsv1.Deployment{}
	g.Expect(suite.Client.Get(context.Background(), client.ObjectKeyFromObject(app), d)).To(Succeed())
	replicas := ptr.Deref(d.Spec.Replicas, 1)
	if st := d.Status; st.ObservedGeneration == d.Generation && st.Replicas == replicas &&
		st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas && st.AvailableReplicas == replicas {
		return
	}
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
