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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// testFriend is the friend Pod of the status tests.
const testFriend = "joe"

func TestComputeStatus(t *testing.T) {
	now := metav1.Now()
	pod := func(ready *corev1.ConditionStatus, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: testFriend, Namespace: "ns"}}
		if ready != nil {
			p.Status.Conditions = []corev1.PodCondition{{
				Type: corev1.PodReady, Status: *ready, Reason: "ContainersNotReady", Message: "containers with unready status: [c]",
			}}
		}
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	status := func(s corev1.ConditionStatus) *corev1.ConditionStatus { return &s }
	type want struct {
		status metav1.ConditionStatus
		reason string
	}

	tests := []struct {
		name                      string
		obs                       observation
		healthy                   bool
		found, ready, readySumary want
		wantKStatus               kstatus.Status
	}{
		{
			name:        "no pod",
			obs:         observation{},
			found:       want{metav1.ConditionFalse, pocv1.ReasonPodNotFound},
			ready:       want{metav1.ConditionFalse, pocv1.ReasonPodNotFound},
			readySumary: want{metav1.ConditionFalse, pocv1.ReasonPodNotFound},
			wantKStatus: kstatus.InProgressStatus,
		},
		{
			name:        "pod being deleted",
			obs:         observation{pod: pod(status(corev1.ConditionTrue), true)},
			found:       want{metav1.ConditionFalse, pocv1.ReasonPodDeleting},
			ready:       want{metav1.ConditionFalse, pocv1.ReasonPodDeleting},
			readySumary: want{metav1.ConditionFalse, pocv1.ReasonPodDeleting},
			wantKStatus: kstatus.InProgressStatus,
		},
		{
			name:        "pod without Ready condition",
			obs:         observation{pod: pod(nil, false)},
			healthy:     true,
			found:       want{metav1.ConditionTrue, pocv1.ReasonPodFound},
			ready:       want{metav1.ConditionUnknown, pocv1.ReasonPodReadinessUnknown},
			readySumary: want{metav1.ConditionUnknown, pocv1.ReasonPodReadinessUnknown},
			wantKStatus: kstatus.InProgressStatus,
		},
		{
			name:        "pod Ready Unknown",
			obs:         observation{pod: pod(status(corev1.ConditionUnknown), false)},
			healthy:     true,
			found:       want{metav1.ConditionTrue, pocv1.ReasonPodFound},
			ready:       want{metav1.ConditionUnknown, pocv1.ReasonPodReadinessUnknown},
			readySumary: want{metav1.ConditionUnknown, pocv1.ReasonPodReadinessUnknown},
			wantKStatus: kstatus.InProgressStatus,
		},
		{
			name:        "pod not ready",
			obs:         observation{pod: pod(status(corev1.ConditionFalse), false)},
			healthy:     true,
			found:       want{metav1.ConditionTrue, pocv1.ReasonPodFound},
			ready:       want{metav1.ConditionFalse, pocv1.ReasonPodNotReady},
			readySumary: want{metav1.ConditionFalse, pocv1.ReasonPodNotReady},
			wantKStatus: kstatus.InProgressStatus,
		},
		{
			name:        "pod ready",
			obs:         observation{pod: pod(status(corev1.ConditionTrue), false)},
			healthy:     true,
			found:       want{metav1.ConditionTrue, pocv1.ReasonPodFound},
			ready:       want{metav1.ConditionTrue, pocv1.ReasonPodReady},
			readySumary: want{metav1.ConditionTrue, pocv1.ReasonPodReady},
			wantKStatus: kstatus.CurrentStatus,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			// A stale previous status must not leak into the result.
			obj := &pocv1.MyCustomResource{
				ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: "ns", Generation: 3},
				Spec:       pocv1.MyCustomResourceSpec{Name: testFriend},
				Status: pocv1.MyCustomResourceStatus{
					Healthy:            !tt.healthy,
					ObservedGeneration: 1,
					Conditions: []metav1.Condition{{
						Type: pocv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Stale", ObservedGeneration: 1,
						LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour)),
					}},
				},
			}
			before := obj.DeepCopy()
			status := computeStatus(obj, &tt.obs)
			g.Expect(obj).To(Equal(before), "computeStatus changes nothing of the MyCustomResource")
			obj.Status = status

			g.Expect(obj.Status.Healthy).To(Equal(tt.healthy))
			g.Expect(obj.Status.ObservedGeneration).To(Equal(int64(3)))
			wantConditions := 3
			if tt.readySumary.status != metav1.ConditionTrue {
				wantConditions++ // Reconciling
				reconciling := meta.FindStatusCondition(obj.Status.Conditions, pocv1.ConditionReconciling)
				g.Expect(reconciling).NotTo(BeNil())
				g.Expect(reconciling.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(reconciling.Reason).To(Equal(tt.readySumary.reason))
				g.Expect(readyReasonClasses).To(HaveKey(tt.readySumary.reason), "every reason of Ready is classified")
			}
			g.Expect(obj.Status.Conditions).To(HaveLen(wantConditions))
			obj.SetGroupVersionKind(pocv1.GroupVersion.WithKind("MyCustomResource"))
			g.Expect(testutil.KStatus(g, obj)).To(Equal(tt.wantKStatus))
			for condType, w := range map[string]want{
				pocv1.ConditionFriendFound: tt.found,
				pocv1.ConditionFriendReady: tt.ready,
				pocv1.ConditionReady:       tt.readySumary,
			} {
				c := meta.FindStatusCondition(obj.Status.Conditions, condType)
				g.Expect(c).NotTo(BeNil(), condType)
				g.Expect(c.Status).To(Equal(w.status), condType)
				g.Expect(c.Reason).To(Equal(w.reason), condType)
				g.Expect(c.Message).To(ContainSubstring(testFriend), condType)
				g.Expect(c.ObservedGeneration).To(Equal(int64(3)), condType)
				g.Expect(c.LastTransitionTime.IsZero()).To(BeFalse(), condType)
			}
		})
	}
}

func TestComputeStatusKeepsTransitionTime(t *testing.T) {
	g := NewWithT(t)
	obj := &pocv1.MyCustomResource{Spec: pocv1.MyCustomResourceSpec{Name: testFriend}}
	obj.Status = computeStatus(obj, &observation{})
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	for i := range obj.Status.Conditions {
		obj.Status.Conditions[i].LastTransitionTime = past
	}
	g.Expect(computeStatus(obj, &observation{})).To(Equal(obj.Status), "same observation, same status")

	status := computeStatus(obj, &observation{pod: &corev1.Pod{}})
	g.Expect(meta.FindStatusCondition(status.Conditions, pocv1.ConditionFriendFound).LastTransitionTime).
		NotTo(Equal(past))
}

// The MyCustomResource's section of docs/conditions.md lists every reason
// of Ready the code sets, with its condition.
func TestConditionsDocAgrees(t *testing.T) {
	testutil.ExpectConditionsDoc(t, "MyCustomResource", readyReasonClasses)
}

func TestFriendNameIndexValue(t *testing.T) {
	tests := []struct {
		name string
		obj  *pocv1.MyCustomResource
		want []string
	}{
		{name: "named friend", obj: &pocv1.MyCustomResource{Spec: pocv1.MyCustomResourceSpec{Name: testFriend}}, want: []string{testFriend}},
		{name: "no friend", obj: &pocv1.MyCustomResource{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(friendNameIndexValue(tt.obj)).To(Equal(tt.want))
		})
	}
}
