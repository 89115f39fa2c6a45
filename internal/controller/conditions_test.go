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
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetProgressConditions(t *testing.T) {
	classes := ReasonClasses{"RollingOut": Working, "ResourceConflict": Blocked}
	readyCond := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: ConditionReady, Status: status, Reason: reason, Message: "why " + reason}
	}
	progressCond := func(condType, reason string) metav1.Condition {
		return metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: reason, Message: "old"}
	}
	tests := []struct {
		name            string
		conditions      []metav1.Condition
		wantReconciling string // reason, empty when the condition must be absent
		wantStalled     string
	}{
		{name: "ready removes both",
			conditions: []metav1.Condition{readyCond(metav1.ConditionTrue, "Ready"),
				progressCond(ConditionReconciling, "RollingOut"), progressCond(ConditionStalled, "ResourceConflict")}},
		{name: "no Ready removes both",
			conditions: []metav1.Condition{progressCond(ConditionReconciling, "RollingOut")}},
		{name: "working reason reconciles",
			conditions:      []metav1.Condition{readyCond(metav1.ConditionFalse, "RollingOut")},
			wantReconciling: "RollingOut"},
		{name: "blocked reason stalls",
			conditions:  []metav1.Condition{readyCond(metav1.ConditionFalse, "ResourceConflict")},
			wantStalled: "ResourceConflict"},
		{name: "Ready Unknown follows its reason",
			conditions:  []metav1.Condition{readyCond(metav1.ConditionUnknown, "ResourceConflict")},
			wantStalled: "ResourceConflict"},
		{name: "unclassified reason reconciles",
			conditions:      []metav1.Condition{readyCond(metav1.ConditionFalse, "SomethingNew")},
			wantReconciling: "SomethingNew"},
		{name: "blocked replaces reconciling",
			conditions: []metav1.Condition{readyCond(metav1.ConditionFalse, "ResourceConflict"),
				progressCond(ConditionReconciling, "RollingOut")},
			wantStalled: "ResourceConflict"},
		{name: "working replaces stalled",
			conditions: []metav1.Condition{progressCond(ConditionStalled, "ResourceConflict"),
				readyCond(metav1.ConditionFalse, "RollingOut")},
			wantReconciling: "RollingOut"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			conditions := tt.conditions
			SetProgressConditions(&conditions, classes, 5)
			for condType, wantReason := range map[string]string{
				ConditionReconciling: tt.wantReconciling, ConditionStalled: tt.wantStalled,
			} {
				c := meta.FindStatusCondition(conditions, condType)
				if wantReason == "" {
					g.Expect(c).To(BeNil(), "%s must be removed, not set False", condType)
					continue
				}
				g.Expect(c).NotTo(BeNil(), condType)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), condType)
				g.Expect(c.Reason).To(Equal(wantReason), condType)
				g.Expect(c.Message).To(Equal("why "+wantReason), condType)
				g.Expect(c.ObservedGeneration).To(Equal(int64(5)), condType)
				g.Expect(c.LastTransitionTime.IsZero()).To(BeFalse(), condType)
			}
			g.Expect(meta.FindStatusCondition(conditions, ConditionReady)).To(Equal(findReady(tt.conditions)),
				"Ready is read, never changed")
		})
	}
}

func findReady(conditions []metav1.Condition) *metav1.Condition {
	return meta.FindStatusCondition(conditions, ConditionReady)
}

func TestSetProgressConditionsKeepsTransitionTime(t *testing.T) {
	g := NewWithT(t)
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	conditions := []metav1.Condition{
		{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: "RollingOut", Message: "2 of 3 updated"},
		{Type: ConditionReconciling, Status: metav1.ConditionTrue, Reason: "RollingOut", Message: "1 of 3 updated",
			LastTransitionTime: past},
	}
	SetProgressConditions(&conditions, ReasonClasses{"RollingOut": Working}, 1)
	c := meta.FindStatusCondition(conditions, ConditionReconciling)
	g.Expect(c.LastTransitionTime).To(Equal(past))
	g.Expect(c.Message).To(Equal("2 of 3 updated"))
}

func TestReasonClassesClassOf(t *testing.T) {
	classes := ReasonClasses{"Conflict": Blocked, "RollingOut": Working}
	tests := []struct {
		reason string
		want   ReasonClass
	}{
		{reason: "Conflict", want: Blocked},
		{reason: "RollingOut", want: Working},
		{reason: "NotInTheTable", want: Working},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			NewWithT(t).Expect(classes.ClassOf(tt.reason)).To(Equal(tt.want))
		})
	}
}
