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

// Condition types of a MyCustomResource. FriendFound, FriendReady and Ready
// have positive polarity: True is the good state. Reconciling is
// abnormal-true: it exists only while True.
const (
	// ConditionFriendFound is True while the friend Pod exists in the
	// MyCustomResource's namespace and is not being deleted. It mirrors
	// status.Healthy.
	ConditionFriendFound = "FriendFound"

	// ConditionFriendReady mirrors the friend Pod's own Ready condition. It is
	// False when there is no friend, Unknown while the Pod reports no
	// readiness.
	ConditionFriendReady = "FriendReady"

	// ConditionReady summarises the others: True when the friend is found and
	// ready. When it is not True its reason is the reason of the first
	// condition (FriendFound, then FriendReady) that is not True.
	ConditionReady = meta.ConditionReady

	// ConditionReconciling is True, with Ready's reason and message, while
	// Ready is not True: kstatus (Flux, kpt, Config Sync) reports the
	// MyCustomResource InProgress until its friend is ready. Every reason of
	// a MyCustomResource is one that resolves without the operator's user
	// acting on it: the friend Pod comes from elsewhere (often the same
	// apply), so its absence is waited for, not reported as a failure. A
	// MyCustomResource is therefore never Stalled.
	ConditionReconciling = meta.ConditionReconciling
)

// Reasons of the MyCustomResource conditions; docs/conditions.md has the
// whole table. Every reason of Ready=False or Unknown sets Reconciling.
const (
	// ReasonPodFound: the friend Pod exists and is not being deleted
	// (FriendFound=True).
	ReasonPodFound = "PodFound"

	// ReasonPodNotFound: no Pod named spec.name exists in the namespace
	// (FriendFound, FriendReady and Ready False).
	ReasonPodNotFound = "PodNotFound"

	// ReasonPodDeleting: the friend Pod exists but has a deletionTimestamp
	// (FriendFound, FriendReady and Ready False).
	ReasonPodDeleting = "PodDeleting"

	// ReasonPodReady: the friend Pod's Ready condition is True (FriendReady
	// and Ready True).
	ReasonPodReady = "PodReady"

	// ReasonPodNotReady: the friend Pod's Ready condition is False
	// (FriendReady and Ready False). The message carries the Pod's reason and
	// message.
	ReasonPodNotReady = "PodNotReady"

	// ReasonPodReadinessUnknown: the friend Pod has no Ready condition yet, or
	// it is Unknown (FriendReady and Ready Unknown).
	ReasonPodReadinessUnknown = "PodReadinessUnknown"
)

// GetConditions returns the MyCustomResource's status conditions (meta.ObjectWithConditions).
func (in *MyCustomResource) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the MyCustomResource's status conditions.
func (in *MyCustomResource) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
