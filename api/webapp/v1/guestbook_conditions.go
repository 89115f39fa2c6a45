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

// Condition types of a Guestbook. Both have positive polarity: True is good.
const (
	// ConditionReady is True when the workload matches the spec, every one
	// of spec.size instances is ready and one of them is active.
	ConditionReady = "Ready"

	// ConditionAvailable is True when an active instance serves: the
	// Service of the Guestbook has a ready Pod behind it.
	ConditionAvailable = "Available"
)

// Reasons of the Guestbook conditions.
const (
	// ReasonInstancesReady (Ready=True): every instance is ready and one is
	// active.
	ReasonInstancesReady = "InstancesReady"

	// ReasonInstancesNotReady (Ready=False): fewer instances are ready than
	// spec.size asks for (starting, rolling, scaling or failing).
	ReasonInstancesNotReady = "InstancesNotReady"

	// ReasonNamespaceNotFound (Ready=False, Available=False): spec.namespace
	// does not exist. The Guestbook recovers by itself once it is created.
	ReasonNamespaceNotFound = "NamespaceNotFound"

	// ReasonResourceConflict (Ready=False, Available=False): an object the
	// operator needs to create (StatefulSet or Service named after the
	// Guestbook) already exists and belongs to someone else. The operator
	// leaves it alone; the message names it.
	ReasonResourceConflict = "ResourceConflict"

	// ReasonActiveInstanceServing (Available=True): a ready instance is
	// active and receives the traffic; the message names its Pod.
	ReasonActiveInstanceServing = "ActiveInstanceServing"

	// ReasonNoReadyInstance (Available=False): no instance is ready, so none
	// is active and the Service has no endpoint.
	ReasonNoReadyInstance = "NoReadyInstance"
)
