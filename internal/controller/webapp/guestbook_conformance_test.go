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
	"maps"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestGuestbookConformance runs the behaviour every kind with a child
// shares (testutil.Conformance) against the Guestbook and its StatefulSet:
// the Guestbook is cluster-scoped, its children live in one namespace
// (spec.namespace), the same for every case. Its Restart case runs
// guestbookMakesNoWritesAtSteadyState too.
func TestGuestbookConformance(t *testing.T) {
	ns := testutil.Namespace(t, suite.Client)
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: guestbookController,
		New: func(name string) client.Object {
			return &webappv1.Guestbook{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: webappv1.GuestbookSpec{
					Size: 1,
					// At most 15 characters: "cm-conflict".
					ConfigMapName: "cm-" + strings.TrimPrefix(name, "conformance-"),
					Type:          webappv1.AliasPhone,
					Namespace:     ns,
				},
			}
		},
		Child: func(parent client.Object) (client.ObjectKey, client.Object) {
			return client.ObjectKey{Namespace: parent.(*webappv1.Guestbook).Spec.Namespace, Name: parent.GetName()}, &appsv1.StatefulSet{}
		},
		Foreign: func(key client.ObjectKey) client.Object { return testutil.ForeignStatefulSet(key.Namespace, key.Name) },
		Change:  func(parent client.Object) { parent.(*webappv1.Guestbook).Spec.Type = webappv1.AliasAddress },
		Changed: func(g Gomega, child client.Object) {
			g.Expect(child.(*appsv1.StatefulSet).Spec.Template.Spec.Containers[0].Env).To(
				ContainElement(corev1.EnvVar{Name: EnvAlias, Value: string(webappv1.AliasAddress)}))
		},
		Tamper: func(child client.Object) { child.(*appsv1.StatefulSet).Spec.Replicas = new(int32(3)) },
		Field:  func(child client.Object) string { return fmt.Sprint(*child.(*appsv1.StatefulSet).Spec.Replicas) },
		Reported: func(g Gomega, parent client.Object) {
			gb := parent.(*webappv1.Guestbook)
			g.Expect(gb.Status.Active).To(Equal(gb.Name + "-0"))
			g.Expect(gb.Status.ReadyReplicas).To(Equal(int32(1)))
		},
		MakeReady:   conformanceInstancesReady,
		Restarted:   func() { writes = suite.Writes },
		SteadyState: guestbookMakesNoWritesAtSteadyState,
	})
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
