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
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sunstrider.cn/operator/api/meta"
)

// The condition types GitOps tools read (api/meta).
const (
	ConditionReady       = meta.ConditionReady
	ConditionReconciling = meta.ConditionReconciling
	ConditionStalled     = meta.ConditionStalled
)

// ReasonClass says what a reason of a Ready condition that is not True means
// to someone waiting for the object.
type ReasonClass int

const (
	// Working: the operator, or a controller it relies on, makes progress
	// by itself (a rollout, Pods starting). Reconciling=True.
	Working ReasonClass = iota + 1
	// Blocked: nothing changes until a person acts (a foreign object in the
	// way, a spec the API server refuses, a rollout past its deadline).
	// Stalled=True, so that a GitOps apply fails at once instead of timing
	// out.
	Blocked
)

// ReasonClasses is one kind's policy: the class of every reason its Ready
// condition can have when it is not True.
type ReasonClasses map[string]ReasonClass

// ClassOf returns the class of reason. A reason missing from the table
// counts as Working: waiting on it is the safer mistake, as it only delays a
// tool's verdict until its own timeout.
func (rc ReasonClasses) ClassOf(reason string) ReasonClass {
	if c, ok := rc[reason]; ok {
		return c
	}
	return Working
}

// SetProgressConditions derives Reconciling and Stalled from the Ready
// condition in conditions, which must already hold the Ready of this
// observation: both are removed while Ready is True (or absent); otherwise
// the one the class of Ready's reason names is set True with Ready's reason
// and message, and the other removed. The conditions it sets carry
// generation as their observedGeneration and keep their lastTransitionTime
// while they stay True.
func SetProgressConditions(conditions *[]metav1.Condition, classes ReasonClasses, generation int64) {
	ready := apimeta.FindStatusCondition(*conditions, ConditionReady)
	if ready == nil || ready.Status == metav1.ConditionTrue {
		apimeta.RemoveStatusCondition(conditions, ConditionReconciling)
		apimeta.RemoveStatusCondition(conditions, ConditionStalled)
		return
	}
	progress := metav1.Condition{
		Type:               ConditionReconciling,
		Status:             metav1.ConditionTrue,
		ObservedGeneration: generation,
		Reason:             ready.Reason,
		Message:            ready.Message,
	}
	remove := ConditionStalled
	if classes.ClassOf(ready.Reason) == Blocked {
		progress.Type, remove = ConditionStalled, ConditionReconciling
	}
	apimeta.RemoveStatusCondition(conditions, remove)
	apimeta.SetStatusCondition(conditions, progress)
}

// MergeConditions is the one way every kind builds its new conditions: own,
// the conditions this observation sets (Ready among them), in their order,
// each with generation as its observedGeneration and keeping the
// lastTransitionTime of previous's condition of its type while its status
// holds; then Reconciling and Stalled derived from Ready
// (SetProgressConditions). A condition of previous that is not among own
// (an abnormal-true one no longer true, or one someone else added) is
// dropped: the operator owns its kinds' conditions.
func MergeConditions(previous []metav1.Condition, classes ReasonClasses, generation int64, own ...metav1.Condition) []metav1.Condition {
	conditions := make([]metav1.Condition, 0, len(own)+1)
	for _, c := range own {
		c.ObservedGeneration = generation
		if old := apimeta.FindStatusCondition(previous, c.Type); old != nil {
			conditions = append(conditions, *old)
		}
		apimeta.SetStatusCondition(&conditions, c)
	}
	for _, t := range []string{ConditionReconciling, ConditionStalled} {
		if old := apimeta.FindStatusCondition(previous, t); old != nil {
			conditions = append(conditions, *old)
		}
	}
	SetProgressConditions(&conditions, classes, generation)
	return conditions
}
