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

// Condition types of a MyCustomResource. All have positive polarity: True is
// the good state.
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
	ConditionReady = "Ready"
)

// Reasons of the MyCustomResource conditions.
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
