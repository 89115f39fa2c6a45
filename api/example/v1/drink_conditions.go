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

// Condition types of a Drink. Both have positive polarity: True is the good
// state.
const (
	// ConditionConfigMapSynced is True when the Drink's ConfigMap exists, is
	// controlled by the Drink and holds its spec.
	ConditionConfigMapSynced = "ConfigMapSynced"

	// ConditionReady summarises the Drink. It currently has the status and
	// reason of ConfigMapSynced.
	ConditionReady = "Ready"
)

// Reasons of the Drink conditions.
const (
	// ReasonSynced: the ConfigMap holds the Drink's spec (True).
	ReasonSynced = "Synced"

	// ReasonResourceConflict: a ConfigMap of the Drink's name exists and is
	// not controlled by the Drink. The operator never overwrites it (False).
	ReasonResourceConflict = "ResourceConflict"

	// ReasonApplyFailed: reading or applying the ConfigMap failed; the
	// message carries the error and the operator retries with backoff (False).
	ReasonApplyFailed = "ApplyFailed"
)
