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

// Condition types of a Guestbook. Ready and Available have positive
// polarity: True is good. Reconciling and Stalled are abnormal-true: they
// exist only while True, and carry Ready's reason and message.
const (
	// ConditionReady is True when the workload matches the spec, every one
	// of spec.size instances is ready and one of them is active.
	ConditionReady = meta.ConditionReady

	// ConditionAvailable is True when an active instance serves: the
	// Service of the Guestbook has a ready Pod behind it.
	ConditionAvailable = "Available"

	// ConditionReconciling is True while Ready is not True for a reason the
	// operator or the StatefulSet controller works on (RollingOut,
	// InstancesNotReady): kstatus (Flux, kpt, Config Sync) reports the
	// Guestbook InProgress.
	ConditionReconciling = meta.ConditionReconciling

	// ConditionStalled is True while Ready is not True for a reason that
	// lasts until a person acts (NamespaceNotFound, SystemNamespaceNotListed,
	// ResourceConflict, ApplyFailed):
	// kstatus reports the Guestbook Failed, so a GitOps apply fails at once
	// instead of timing out.
	ConditionStalled = meta.ConditionStalled
)

// Reasons of the Guestbook conditions; docs/conditions.md has the whole
// table.
const (
	// ReasonInstancesReady (Ready=True): every instance is ready and one is
	// active.
	ReasonInstancesReady = "InstancesReady"

	// ReasonRollingOut (Ready=False, Reconciling): the StatefulSet has not
	// yet rolled its current spec out to every instance (its controller has
	// not seen the latest generation, some instances run an older revision,
	// or the update revision is not yet the current one).
	ReasonRollingOut = "RollingOut"

	// ReasonInstancesNotReady (Ready=False, Reconciling): fewer instances
	// are ready than spec.size asks for (starting, scaling or failing).
	ReasonInstancesNotReady = "InstancesNotReady"

	// ReasonNamespaceNotFound (Ready=False, Available=False, Stalled):
	// spec.namespace does not exist. Someone must create it; the Guestbook
	// then recovers by itself.
	ReasonNamespaceNotFound = "NamespaceNotFound"

	// ReasonSystemNamespaceNotListed (Ready=False, Available=False,
	// Stalled): spec.namespace is a system namespace (kube-*) that the
	// OperatorConfiguration's spec.guestbookSystemNamespaces does not list,
	// e.g. a Guestbook stored before that rule or while the webhooks were
	// off. Nothing is made or relabelled there; an administrator lists the
	// namespace, or the Guestbook is deleted.
	ReasonSystemNamespaceNotListed = "SystemNamespaceNotListed"

	// ReasonResourceConflict (Ready=False, Available=False, Stalled): an
	// object the operator needs to create (StatefulSet or Service named
	// after the Guestbook) already exists and belongs to someone else. The
	// operator leaves it alone; the message names it.
	ReasonResourceConflict = meta.ReasonResourceConflict

	// ReasonApplyFailed (Ready=False, Stalled): the API server refused a
	// child's write (the StatefulSet, the Service or the default ConfigMap:
	// invalid, or forbidden by an admission policy, a quota or RBAC); the
	// message quotes its answer. The instances already running keep being
	// served: the election goes on, and Available, status.active and
	// status.standby report them. The operator retries with backoff (an
	// invalid child at the next change of the Guestbook).
	ReasonApplyFailed = meta.ReasonApplyFailed

	// ReasonActiveInstanceServing (Available=True): a ready instance is
	// active and receives the traffic; the message names its Pod.
	ReasonActiveInstanceServing = "ActiveInstanceServing"

	// ReasonNoReadyInstance (Available=False): no instance is ready, so none
	// is active and the Service has no endpoint.
	ReasonNoReadyInstance = "NoReadyInstance"
)

// GetConditions returns the Guestbook's status conditions (meta.ObjectWithConditions).
func (in *Guestbook) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the Guestbook's status conditions.
func (in *Guestbook) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
