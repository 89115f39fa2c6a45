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
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

// statefulSet is a StatefulSet of the given size at generation 3 whose
// status is changed by edit; unedited, it has rolled out revision gb-2.
func statefulSet(size int32, edit func(*appsv1.StatefulSetStatus)) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gb", Generation: 3},
		Spec:       appsv1.StatefulSetSpec{Replicas: &size},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 3, Replicas: size, ReadyReplicas: size,
			CurrentReplicas: size, UpdatedReplicas: size, CurrentRevision: "gb-2", UpdateRevision: "gb-2"},
	}
	if edit != nil {
		edit(&sts.Status)
	}
	return sts
}

func readyInstances(ready ...bool) []instance {
	out := make([]instance, len(ready))
	for i, r := range ready {
		out[i] = instance{Name: "gb-" + string(rune('0'+i)), Ordinal: i, Ready: r}
	}
	return out
}

// noAnswer is a reconcile's children all applied.
func noAnswer() *controllers.Children { return &controllers.Children{Kind: "Guestbook"} }

// conflict is a reconcile's children with an object in a child's place.
func conflict(name string) *controllers.Children {
	return &controllers.Children{Kind: "Guestbook", Conflicts: []string{name}}
}

// refused is a reconcile's children with the StatefulSet's write refused.
func refused(err error) *controllers.Children {
	return &controllers.Children{Kind: "Guestbook", Refusal: &controllers.Refusal{Kind: "StatefulSet", Err: err}}
}

var (
	quotaExceeded = apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "gb",
		errors.New("exceeded quota: compute"))
	invalidSpec = apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, "gb",
		field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be non-negative")})
)

var conditionTests = []struct {
	name          string
	obs           observation
	wantReady     metav1.ConditionStatus
	wantReadyWhy  string
	wantAvailable metav1.ConditionStatus
	wantAvailWhy  string
	wantKStatus   kstatus.Status
}{
	{
		name:         "namespace missing",
		obs:          observation{namespace: "ns", namespaceMissing: true, size: 3, children: noAnswer()},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonNamespaceNotFound, wantAvailable: metav1.ConditionFalse, wantAvailWhy: webappv1.ReasonNamespaceNotFound,
		wantKStatus: kstatus.FailedStatus,
	},
	{
		name:         "system namespace not listed",
		obs:          observation{namespace: "kube-system", namespaceRefused: true, size: 3, children: noAnswer()},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonSystemNamespaceNotListed, wantAvailable: metav1.ConditionFalse,
		wantAvailWhy: webappv1.ReasonSystemNamespaceNotListed,
		wantKStatus:  kstatus.FailedStatus,
	},
	{
		name:         "conflict",
		obs:          observation{namespace: "ns", children: conflict("StatefulSet ns/gb (it has no controller)"), size: 3},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonResourceConflict, wantAvailable: metav1.ConditionFalse, wantAvailWhy: webappv1.ReasonResourceConflict,
		wantKStatus: kstatus.FailedStatus,
	},
	{
		name:         "a child refused by the API server, nothing running",
		obs:          observation{namespace: "ns", children: refused(quotaExceeded), size: 3},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonApplyFailed, wantAvailable: metav1.ConditionFalse, wantAvailWhy: webappv1.ReasonNoReadyInstance,
		wantKStatus: kstatus.FailedStatus,
	},
	{
		// The running instances are still observed and elected: the
		// refusal is reported beside them, and the Guestbook serves.
		name: "a child refused by the API server, instances running",
		obs: observation{namespace: "ns", children: refused(quotaExceeded), size: 3,
			instances: readyInstances(true, true, true), active: "gb-1", standby: []string{"gb-0", "gb-2"},
			statefulSet: statefulSet(3, nil)},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonApplyFailed, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.FailedStatus,
	},
	{
		// Invalid is also a refusal: only a new spec changes it.
		name: "a child refused as invalid, instances running",
		obs: observation{namespace: "ns", children: refused(invalidSpec), size: 1,
			instances: readyInstances(true), active: "gb-0", statefulSet: statefulSet(1, nil)},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonApplyFailed, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.FailedStatus,
	},
	{
		name:         "no pods yet",
		obs:          observation{namespace: "ns", children: noAnswer(), size: 3},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonInstancesNotReady, wantAvailable: metav1.ConditionFalse, wantAvailWhy: webappv1.ReasonNoReadyInstance,
		wantKStatus: kstatus.InProgressStatus,
	},
	{
		name:         "some ready, one active",
		obs:          observation{namespace: "ns", children: noAnswer(), size: 3, instances: readyInstances(true, false, true), active: "gb-0", standby: []string{"gb-1", "gb-2"}},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonInstancesNotReady, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.InProgressStatus,
	},
	{
		name:         "all ready but more pods than size (scaling down)",
		obs:          observation{namespace: "ns", children: noAnswer(), size: 2, instances: readyInstances(true, true, true), active: "gb-0", standby: []string{"gb-1", "gb-2"}},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonInstancesNotReady, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.InProgressStatus,
	},
	{
		name: "all ready but the StatefulSet has not seen the new spec",
		obs: observation{namespace: "ns", children: noAnswer(), size: 3, instances: readyInstances(true, true, true), active: "gb-1", standby: []string{"gb-0", "gb-2"},
			statefulSet: statefulSet(3, func(st *appsv1.StatefulSetStatus) { st.ObservedGeneration = 2 })},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonRollingOut, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.InProgressStatus,
	},
	{
		name: "all ready but an instance runs the old revision",
		obs: observation{namespace: "ns", children: noAnswer(), size: 3, instances: readyInstances(true, true, true), active: "gb-1", standby: []string{"gb-0", "gb-2"},
			statefulSet: statefulSet(3, func(st *appsv1.StatefulSetStatus) { st.UpdatedReplicas, st.UpdateRevision = 2, "gb-3" })},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonRollingOut, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.InProgressStatus,
	},
	{
		name: "all updated but the update revision is not yet current",
		obs: observation{namespace: "ns", children: noAnswer(), size: 3, instances: readyInstances(true, true, true), active: "gb-1", standby: []string{"gb-0", "gb-2"},
			statefulSet: statefulSet(3, func(st *appsv1.StatefulSetStatus) { st.UpdateRevision = "gb-3" })},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonRollingOut, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.InProgressStatus,
	},
	{
		name: "rolling out and an instance not ready",
		obs: observation{namespace: "ns", children: noAnswer(), size: 3, instances: readyInstances(true, true, false), active: "gb-1", standby: []string{"gb-0", "gb-2"},
			statefulSet: statefulSet(3, func(st *appsv1.StatefulSetStatus) { st.UpdatedReplicas, st.UpdateRevision = 1, "gb-3" })},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonRollingOut, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.InProgressStatus,
	},
	{
		name: "all ready",
		obs: observation{namespace: "ns", children: noAnswer(), size: 3, instances: readyInstances(true, true, true), active: "gb-1", standby: []string{"gb-0", "gb-2"},
			statefulSet: statefulSet(3, nil)},
		wantReady:    metav1.ConditionTrue,
		wantReadyWhy: webappv1.ReasonInstancesReady, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
		wantKStatus: kstatus.CurrentStatus,
	},
}

// TestComputeStatusConditions checks Ready and Available for every
// observation: their status, reason, generation, and a message for a
// person. A conflict or a refusal takes Ready's reason and message from
// the children's answers (Children.NotReady).
func TestComputeStatusConditions(t *testing.T) {
	for _, tt := range conditionTests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
			status := computeStatus(gb, &tt.obs)
			ready := meta.FindStatusCondition(status.Conditions, webappv1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(tt.wantReady))
			g.Expect(ready.Reason).To(Equal(tt.wantReadyWhy))
			g.Expect(ready.ObservedGeneration).To(Equal(int64(4)))
			g.Expect(ready.Message).NotTo(BeEmpty())
			if reason, message, ok := tt.obs.children.NotReady(); ok && !tt.obs.namespaceMissing {
				g.Expect(ready.Reason).To(Equal(reason))
				g.Expect(ready.Message).To(Equal(message))
			}
			available := meta.FindStatusCondition(status.Conditions, webappv1.ConditionAvailable)
			g.Expect(available).NotTo(BeNil())
			g.Expect(available.Status).To(Equal(tt.wantAvailable))
			g.Expect(available.Reason).To(Equal(tt.wantAvailWhy))
			g.Expect(available.ObservedGeneration).To(Equal(int64(4)))
			g.Expect(available.Message).NotTo(BeEmpty())
		})
	}
}

func TestComputeStatusMessages(t *testing.T) {
	g := NewWithT(t)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	status := computeStatus(gb, &observation{namespace: "ns", size: 1, children: refused(quotaExceeded)})
	g.Expect(meta.FindStatusCondition(status.Conditions, webappv1.ConditionReady).Message).To(
		Equal(`The API server refused the StatefulSet: statefulsets.apps "gb" is forbidden: exceeded quota: compute`))
	status = computeStatus(gb, &observation{namespace: "ns", size: 1, children: conflict("StatefulSet ns/gb (it has no controller)")})
	for _, t := range []string{webappv1.ConditionReady, webappv1.ConditionAvailable} {
		g.Expect(meta.FindStatusCondition(status.Conditions, t).Message).To(Equal(
			"StatefulSet ns/gb (it has no controller) exists and is not controlled by this Guestbook; the operator leaves it untouched"))
	}
}

// TestSystemNamespaceMessage: the message names the namespace, the field
// that allows it and what a person can do.
func TestSystemNamespaceMessage(t *testing.T) {
	g := NewWithT(t)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	status := computeStatus(gb, &observation{namespace: "kube-system", namespaceRefused: true, size: 1, children: noAnswer()})
	g.Expect(meta.FindStatusCondition(status.Conditions, webappv1.ConditionReady).Message).To(Equal(
		"Namespace kube-system is a system namespace: the operator makes nothing there for a Guestbook unless an " +
			"administrator lists it in spec.guestbookSystemNamespaces of the OperatorConfiguration (docs/security.md); " +
			"list it, or delete this Guestbook"))
}

// TestComputeStatusKStatus checks what GitOps tools make of every status:
// Reconciling or Stalled carry Ready's reason, exist only while True, and
// kstatus reports Current, InProgress or Failed.
func TestComputeStatusKStatus(t *testing.T) {
	for _, tt := range conditionTests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "gb", Generation: 4}}
			gb.SetGroupVersionKind(webappv1.GroupVersion.WithKind("Guestbook"))
			gb.Status = computeStatus(gb, &tt.obs)
			g.Expect(testutil.KStatus(g, gb)).To(Equal(tt.wantKStatus))
			g.Expect(testutil.StatusInvariants(toUnstructured(g, gb))).To(BeEmpty())

			reconciling := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionReconciling)
			stalled := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionStalled)
			switch tt.wantKStatus {
			case kstatus.CurrentStatus:
				g.Expect(reconciling).To(BeNil())
				g.Expect(stalled).To(BeNil())
			case kstatus.InProgressStatus:
				g.Expect(stalled).To(BeNil())
				g.Expect(reconciling.Reason).To(Equal(tt.wantReadyWhy))
			case kstatus.FailedStatus:
				g.Expect(reconciling).To(BeNil())
				g.Expect(stalled.Reason).To(Equal(tt.wantReadyWhy))
			}
			if tt.wantReady != metav1.ConditionTrue {
				g.Expect(readyReasonClasses).To(HaveKey(tt.wantReadyWhy), "every reason of Ready=False is classified")
			}
		})
	}
}

func TestStatefulSetRollingOut(t *testing.T) {
	tests := []struct {
		name string
		sts  *appsv1.StatefulSet
		want string // a part of the message, empty when rolled out
	}{
		{name: "not read", sts: nil, want: ""},
		{name: "rolled out", sts: statefulSet(2, nil), want: ""},
		{name: "new generation not seen", sts: statefulSet(2, func(st *appsv1.StatefulSetStatus) { st.ObservedGeneration = 2 }),
			want: "not yet seen generation 3"},
		{name: "instances updating", sts: statefulSet(2, func(st *appsv1.StatefulSetStatus) {
			st.UpdatedReplicas, st.UpdateRevision = 1, "gb-3"
		}), want: "1 of 2 instances updated"},
		{name: "scaling up", sts: statefulSet(2, func(st *appsv1.StatefulSetStatus) { st.UpdatedReplicas = 1 }),
			want: "1 of 2 instances updated"},
		{name: "revision not yet current", sts: statefulSet(2, func(st *appsv1.StatefulSetStatus) { st.UpdateRevision = "gb-3" }),
			want: "revision gb-3 is not yet current (gb-2 is)"},
		{name: "replicas unset means one", sts: func() *appsv1.StatefulSet {
			sts := statefulSet(1, nil)
			sts.Spec.Replicas = nil
			return sts
		}(), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := statefulSetRollingOut(tt.sts)
			if tt.want == "" {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(ContainSubstring(tt.want))
			g.Expect(got).To(ContainSubstring("StatefulSet ns/gb"))
		})
	}
}

func TestComputeStatus(t *testing.T) {
	g := NewWithT(t)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	gb.Status.Standby = []string{"stale"}
	obs := observation{namespace: "ns", size: 2, children: noAnswer(), instances: readyInstances(true, false),
		active: "gb-0", standby: []string{"gb-1"}}
	before := gb.DeepCopy()
	gb.Status = computeStatus(gb, &obs)
	g.Expect(before.Status.Standby).To(Equal([]string{"stale"}), "computeStatus returns a new status")
	g.Expect(gb.Status.Active).To(Equal("gb-0"))
	g.Expect(gb.Status.Standby).To(Equal([]string{"gb-1"}))
	g.Expect(gb.Status.ReadyReplicas).To(Equal(int32(1)))
	g.Expect(gb.Status.ObservedGeneration).To(Equal(int64(2)))

	// The transition time only moves when the status changes, and gb is
	// left as it was.
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	for i := range gb.Status.Conditions {
		gb.Status.Conditions[i].LastTransitionTime = past
	}
	before = gb.DeepCopy()
	obs.instances = readyInstances(true, true)
	status := computeStatus(gb, &obs)
	g.Expect(gb).To(Equal(before), "computeStatus never changes gb")
	ready := meta.FindStatusCondition(status.Conditions, webappv1.ConditionReady)
	available := meta.FindStatusCondition(status.Conditions, webappv1.ConditionAvailable)
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(ready.LastTransitionTime).NotTo(Equal(past))
	g.Expect(available.LastTransitionTime).To(Equal(past))
	g.Expect(meta.FindStatusCondition(status.Conditions, webappv1.ConditionReconciling)).To(BeNil(), "removed once Ready")
	gb.Status = status

	// Nothing observed: no active, no standby (nil, not empty).
	status = computeStatus(gb, &observation{namespace: "ns", namespaceMissing: true, size: 2, children: noAnswer()})
	g.Expect(status.Active).To(BeEmpty())
	g.Expect(status.Standby).To(BeNil())
	g.Expect(status.ReadyReplicas).To(BeZero())
	g.Expect(status.Conditions).To(HaveLen(3), "Ready, Available, Stalled")
}

// TestConditionsDocAgrees checks docs/conditions.md's Guestbook table
// against the reasons of Ready=False the code sets and their class.
func TestConditionsDocAgrees(t *testing.T) {
	testutil.ExpectConditionsDoc(t, "Guestbook", readyReasonClasses)
}

// toUnstructured is obj as the API server would hold it.
func toUnstructured(g Gomega, obj runtime.Object) *unstructured.Unstructured {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(HaveOccurred())
	return &unstructured.Unstructured{Object: u}
}
