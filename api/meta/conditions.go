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

// Package meta holds what the status of every kind of the operator's APIs
// shares, as Flux's apis/meta does for its kinds: the condition types
// GitOps tools read, the reasons of the answers to a child's write, and the
// interface of an object with conditions. Each API group declares its own
// names for them (apps/v1.ConditionReady, ...) as these values.
package meta

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types that GitOps tools read, with the meaning kstatus
// (sigs.k8s.io/cli-utils) and Flux give them. Reconciling and Stalled are
// abnormal-true: they exist only while True and are removed, never set
// False.
const (
	// ConditionReady summarises an object of every kind.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the operator works towards Ready
	// (kstatus InProgress), with Ready's reason and message.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True while Ready cannot be reached until a person
	// acts (kstatus Failed), with Ready's reason and message.
	ConditionStalled = "Stalled"
)

// Reasons of Ready=False that every kind with children shares: the
// answers of the API server to a child's write (docs/conditions.md).
const (
	// ReasonResourceConflict: an object of a child's name exists that the
	// parent does not control; the operator leaves it untouched (Stalled).
	ReasonResourceConflict = "ResourceConflict"
	// ReasonApplyFailed: the API server refused a child's write, or its
	// deletion, as invalid or otherwise (RBAC, an admission policy, a
	// quota); the message carries its answer (Stalled).
	ReasonApplyFailed = "ApplyFailed"
)

// ObjectWithConditions is an object whose status holds conditions: every
// kind of the operator's APIs.
type ObjectWithConditions interface {
	// GetConditions returns the status conditions.
	GetConditions() []metav1.Condition
	// SetConditions replaces the status conditions.
	SetConditions([]metav1.Condition)
}
