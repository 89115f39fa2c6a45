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
	ConditionReady = "Ready"

	// ConditionReconciling is True while Ready is not True for a reason the
	// operator works on (ApplyFailed, retried with backoff): kstatus (Flux,
	// kpt, Config Sync) reports the Drink InProgress.
	ConditionReconciling = "Reconciling"

	// ConditionStalled is True while Ready is not True for a reason that
	// lasts until a person acts (ResourceConflict, ApplyRejected): kstatus
	// reports the Drink Failed, so a GitOps apply fails at once instead of
	// timing out.
	ConditionStalled = "Stalled"
)

// Reasons of the Drink conditions; docs/conditions.md has the whole table.
const (
	// ReasonSynced: the ConfigMap holds the Drink's spec (True).
	ReasonSynced = "Synced"

	// ReasonResourceConflict: a ConfigMap of the Drink's name exists and is
	// not controlled by the Drink. The operator never overwrites it (False,
	// Stalled).
	ReasonResourceConflict = "ResourceConflict"

	// ReasonApplyFailed: reading or applying the ConfigMap failed for a
	// reason that may pass (a timeout, a conflict, an API server error); the
	// message carries the error and the operator retries with backoff
	// (False, Reconciling).
	ReasonApplyFailed = "ApplyFailed"

	// ReasonApplyRejected: the API server refused the ConfigMap as invalid
	// or forbidden (an admission policy, a quota, missing permissions);
	// retrying the same ConfigMap cannot help until a person changes the
	// Drink or the cluster's rules. The message carries the API server's
	// answer; the operator still retries with backoff (False, Stalled).
	ReasonApplyRejected = "ApplyRejected"
)
