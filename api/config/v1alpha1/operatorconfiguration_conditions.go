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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sunstrider.cn/operator/api/meta"
)

// Condition types of an OperatorConfiguration. Ready has positive polarity;
// Reconciling and Stalled are abnormal-true: they exist only while True and
// carry Ready's reason and message.
const (
	// ConditionReady is True when every field of the spec is in effect.
	ConditionReady = meta.ConditionReady
	// ConditionReconciling is True while the operator restarts itself to
	// apply a change (RestartRequired): kstatus reports InProgress.
	ConditionReconciling = meta.ConditionReconciling
	// ConditionStalled is True while a field is refused (Refused): kstatus
	// reports Failed until a person corrects the spec.
	ConditionStalled = meta.ConditionStalled
	// ConditionAccessChecks is True when the admission webhooks that check
	// a requester's rights (spec.childAccess) and the Application's size
	// bounds run: this manager serves them and the cluster registers them.
	// False (reason Unenforced) says which is missing and how to turn them
	// on; status.effective.childAccess then says Unenforced. Ready does not
	// depend on it: running without webhooks is a choice (make run), which
	// this condition, a Warning event and a metric make visible.
	ConditionAccessChecks = "AccessChecks"
)

// Reasons of the OperatorConfiguration conditions; docs/conditions.md has
// the whole table.
const (
	// ReasonApplied (Ready=True): every field of the spec is in effect.
	ReasonApplied = "Applied"
	// ReasonRefused (Ready=False, Stalled): a field cannot be applied (a
	// namespace of watchNamespaces does not exist, a limit below its
	// request); status.refused names each and the value in effect stays in
	// status.effective.
	ReasonRefused = "Refused"
	// ReasonRestartRequired (Ready=False, Reconciling): a field that applies
	// only at start (controllers, watchNamespaces) changed; the operator
	// writes this status, then exits for its Deployment to restart it.
	ReasonRestartRequired = "RestartRequired"
	// ReasonEnforced (AccessChecks=True): the access checks run at
	// admission.
	ReasonEnforced = "Enforced"
	// ReasonUnenforced (AccessChecks=False): no access check runs at
	// admission; the message says why (Warning event).
	ReasonUnenforced = "Unenforced"
)

// GetConditions returns the OperatorConfiguration's status conditions (meta.ObjectWithConditions).
func (in *OperatorConfiguration) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the OperatorConfiguration's status conditions.
func (in *OperatorConfiguration) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
