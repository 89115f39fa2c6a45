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

package poc

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/testutil"
)

// TestMyCustomResourceConformance runs the behaviour every kind shares
// (testutil.Conformance) against the MyCustomResource, in one namespace. It
// writes no child (it observes a friend Pod it does not own), so its table
// has the cases of a kind without children: Restart, Deletion, Invariants.
// A converged MyCustomResource is Ready: its friend Pod exists and is
// ready.
func TestMyCustomResourceConformance(t *testing.T) {
	ns := testutil.Namespace(t, suite.Client)
	testutil.Conformance(t, testutil.ConformanceKind{
		Suite:      suite,
		Controller: ControllerName,
		New: func(name string) client.Object {
			return &pocv1.MyCustomResource{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       pocv1.MyCustomResourceSpec{Name: name + "-friend"},
			}
		},
		MakeReady: conformanceFriendReady,
		Restarted: func() { writes = suite.Writes },
	})
}

// conformanceFriendReady does what envtest does not: the friend Pod of the
// MyCustomResource made and, as the kubelet would, reported ready. It
// writes only what is not so yet.
func conformanceFriendReady(g Gomega, parent client.Object) {
	ctx := context.Background()
	obj := parent.(*pocv1.MyCustomResource)
	pod := &corev1.Pod{}
	err := suite.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: obj.Spec.Name}, pod)
	if apierrors.IsNotFound(err) {
		pod = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.Spec.Name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "friend", Image: "example.com/friend:1"}}},
		}
		g.Expect(suite.Client.Create(ctx, pod)).To(Succeed())
	} else {
		g.Expect(err).NotTo(HaveOccurred())
	}
	if ready := machinery.PodReadyCondition(pod); ready == nil || ready.Status != corev1.ConditionTrue {
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		g.Expect(suite.Client.Status().Update(ctx, pod)).To(Succeed())
	}
}
