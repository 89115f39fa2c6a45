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

package webapp

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestGuestbookConformance runs the behaviour every kind shares
// (testutil.Conformance) against the Guestbook and each of its children,
// its StatefulSet, its Service and its ConfigMap: the Guestbook is
// cluster-scoped, its children live in one namespace (spec.namespace), the
// same for every case. Its Restart case runs
// guestbookMakesNoWritesAtSteadyState too.
func TestGuestbookConformance(t *testing.T) {
	ns := testutil.Namespace(t, suite.Client)
	// workload is the key of the StatefulSet and of the Service.
	workload := func(parent client.Object) client.ObjectKey {
		return client.ObjectKey{Namespace: parent.(*webappv1.Guestbook).Spec.Namespace, Name: parent.GetName()}
	}
	// serving asserts the running instances are still reported, the active
	// one serving.
	serving := func(g Gomega, parent client.Object) {
		gb := parent.(*webappv1.Guestbook)
		g.Expect(gb.Status.Active).To(Equal(gb.Name + "-0"))
		g.Expect(gb.Status.ReadyReplicas).To(Equal(int32(1)))
		g.Expect(meta.IsStatusConditionTrue(gb.Status.Conditions, webappv1.ConditionAvailable)).To(BeTrue(), "Available")
	}
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: ControllerName,
		New: func(name string) client.Object {
			return &webappv1.Guestbook{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: webappv1.GuestbookSpec{
					Size:          1,
					ConfigMapName: conformanceConfigMapName(name),
					Type:          webappv1.AliasPhone,
					Namespace:     ns,
				},
			}
		},
		Children: []testutil.ConformanceChild{{
			Kind: "StatefulSet",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return workload(parent), &appsv1.StatefulSet{}
			},
			Foreign: func(key client.ObjectKey) client.Object { return testutil.ForeignStatefulSet(key.Namespace, key.Name) },
			Change:  func(parent client.Object) { parent.(*webappv1.Guestbook).Spec.Type = webappv1.AliasAddress },
			Changed: func(g Gomega, child client.Object) {
				g.Expect(child.(*appsv1.StatefulSet).Spec.Template.Spec.Containers[0].Env).To(
					ContainElement(corev1.EnvVar{Name: EnvAlias, Value: string(webappv1.AliasAddress)}))
			},
			Tamper:   func(child client.Object) { child.(*appsv1.StatefulSet).Spec.Replicas = new(int32(3)) },
			Field:    func(child client.Object) string { return fmt.Sprint(*child.(*appsv1.StatefulSet).Spec.Replicas) },
			Reported: serving,
		}, {
			// No field of the spec changes the Service (its name and
			// namespace are the Guestbook's): its refused write is the
			// put back of its selector (Tamper).
			Kind: "Service",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				return workload(parent), &corev1.Service{}
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
			Tamper:   func(child client.Object) { child.(*corev1.Service).Spec.Selector[LabelRole] = RoleStandby },
			Field:    func(child client.Object) string { return child.(*corev1.Service).Spec.Selector[LabelRole] },
			Reported: serving,
		}, {
			// The operator only ever creates it, when missing (with
			// default settings): its refused write is its creation again
			// once deleted, while the instances running keep being served.
			Kind: "ConfigMap",
			Child: func(parent client.Object) (client.ObjectKey, client.Object) {
				gb := parent.(*webappv1.Guestbook)
				return client.ObjectKey{Namespace: gb.Spec.Namespace, Name: gb.Spec.ConfigMapName}, &corev1.ConfigMap{}
			},
			Reported: serving,
			DoesNotApply: map[testutil.ConformanceCase]string{
				testutil.CaseConflict: "the ConfigMap is the user's once it exists, whoever made it: one in its place is " +
					"used, read only, never a conflict (reconcileConfigMap; TestGuestbookUsesForeignConfigMapReadOnly)",
				testutil.CaseChildChanged: "its data is the user's to edit: a change rolls the instances and is never put " +
					"back (reconcileConfigMap; TestGuestbookCreatesChildren)",
			},
		}},
		MakeReady:   conformanceInstancesReady,
		Restarted:   func() { writes = suite.Writes },
		SteadyState: guestbookMakesNoWritesAtSteadyState,
	})
}

// conformanceConfigMapName is the spec.configMapName of the Guestbook
// named name: one of its own, at most 15 characters.
func conformanceConfigMapName(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return fmt.Sprintf("cm-%08x", h.Sum32())
}

// conformanceInstancesReady does for the Guestbook's StatefulSet what
// envtest does not: its controller's status once every instance runs the
// current template, its Pods, and the kubelet's Ready on them. It writes
// only what is not so yet.
func conformanceInstancesReady(g Gomega, parent client.Object) {
	ctx := context.Background()
	gb := parent.(*webappv1.Guestbook)
	sts := &appsv1.StatefulSet{}
	g.Expect(suite.Client.Get(ctx, client.ObjectKey{Namespace: gb.Spec.Namespace, Name: gb.Name}, sts)).To(Succeed())
	replicas := *sts.Spec.Replicas
	revision := fmt.Sprintf("%s-%d", sts.Name, sts.Generation)
	if st := sts.Status; st.ObservedGeneration != sts.Generation || st.UpdateRevision != revision || st.Replicas != replicas {
		sts.Status = appsv1.StatefulSetStatus{
			ObservedGeneration: sts.Generation,
			Replicas:           replicas, CurrentReplicas: replicas, UpdatedReplicas: replicas,
			CurrentRevision: revision, UpdateRevision: revision,
		}
		g.Expect(suite.Client.Status().Update(ctx, sts)).To(Succeed())
	}
	for ordinal := range replicas {
		name := fmt.Sprintf("%s-%d", sts.Name, ordinal)
		pod := &corev1.Pod{}
		err := suite.Client.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: name}, pod)
		if apierrors.IsNotFound(err) {
			labels := maps.Clone(sts.Spec.Template.Labels)
			labels["statefulset.kubernetes.io/pod-name"] = name
			pod = &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: name, Namespace: sts.Namespace, Labels: labels, Annotations: sts.Spec.Template.Annotations,
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))},
				},
				Spec: *sts.Spec.Template.Spec.DeepCopy(),
			}
			g.Expect(suite.Client.Create(ctx, pod)).To(Succeed())
		} else {
			g.Expect(err).NotTo(HaveOccurred())
		}
		if len(pod.Status.Conditions) != 1 || pod.Status.Conditions[0].Status != corev1.ConditionTrue {
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			g.Expect(suite.Client.Status().Update(ctx, pod)).To(Succeed())
		}
	}
}
