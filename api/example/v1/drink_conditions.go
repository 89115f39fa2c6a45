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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sunstrider.cn/operator/api/meta"
)

// Condition types of a Drink. ConfigMapSynced and Ready have positive
// polarity: True is the good state. Reconciling and Stalled are
// abnormal-true: they exist only while True, and carry Ready's reason and
// message.
const (
	// ConditionConfigMapSynced is True when the Drink's ConfigMap exists, is
	// controlled by the Drink and holds its spec.
	ConditionConfigMapSynced = "ConfigMapSynced"

	// ConditionReady summarises the Drink. It currently has the status and
	// reason of ConfigMapSynced.
	ConditionReady = meta.ConditionReady

	// ConditionReconciling is True while Ready is not True for a reason the
	// operator works on: kstatus (Flux, kpt, Config Sync) reports the Drink
	// InProgress. No reason of a Drink sets it today; it is kept for the
	// kstatus contract every kind shares.
	ConditionReconciling = meta.ConditionReconciling

	// ConditionStalled is True while Ready is not True for a reason that
	// lasts until a person acts (ResourceConflict, ApplyFailed): kstatus
	// reports the Drink Failed, so a GitOps apply fails at once instead of
	// timing out.
	ConditionStalled = meta.ConditionStalled
)

// Reasons of the Drink conditions; docs/conditions.md has the whole table.
const (
	// ReasonSynced: the ConfigMap holds the Drink's spec (True).
	ReasonSynced = "Synced"

	// ReasonResourceConflict: a ConfigMap of the Drink's name exists and is
	// not controlled by the Drink. The operator never overwrites it (False,
	// Stalled).
	ReasonResourceConflict = meta.ReasonResourceConflict

	// ReasonApplyFailed: the API server refused the ConfigMap (invalid,
	// or forbidden by RBAC, an admission policy, a quota). The message is
	// the API server's; the ConfigMap already there is kept (False,
	// Stalled). A ConfigMap refused as invalid waits for a new spec of the
	// Drink; any other refusal is retried with backoff.
	ReasonApplyFailed = meta.ReasonApplyFailed

	// ReasonApplyRejected was set when the API server refused the ConfigMap
	// as invalid or forbidden (False, Stalled).
	//
	// Deprecated: no longer set; a refused write is ApplyFailed (Stalled)
	// for every kind since the release after 0.2.0. Kept because stored
	// objects and users' alerts may name it.
	ReasonApplyRejected = "ApplyRejected"
)

// GetConditions returns the Drink's status conditions (meta.ObjectWithConditions).
func (in *Drink) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the Drink's status conditions.
func (in *Drink) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
