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

package webapp

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/settings"
)

// observation is what one reconcile saw of a Guestbook's world. The status
// is computed from it alone.
type observation struct {
	// namespace is spec.namespace (defaulted).
	namespace string
	// namespaceMissing is set when the namespace does not exist or is
	// terminating; nothing else was observed then.
	namespaceMissing bool
	// namespaceRefused is set when the namespace is a system namespace
	// the settings do not list; nothing else was observed then.
	namespaceRefused bool
	// children holds the API server's answers to the children's reads and
	// writes: a conflict (nothing after it was observed then) or a refusal
	// (the workload already running was still observed).
	children *controllers.Children
	// size is spec.size.
	size int32
	// instances are the Pods of the StatefulSet, by ordinal, with the role
	// the election gave them.
	instances []instance
	// active and standby are the outcome of the election.
	active  string
	standby []string
	// statefulSet is the Guestbook's StatefulSet as last read or as the
	// apply returned it (its metadata.generation, spec.replicas and
	// status); nil when it was not read, and then its rollout is not
	// judged.
	statefulSet *appsv1.StatefulSet
}

func (o *observation) readyReplicas() int32 {
	var n int32
	for _, in := range o.instances {
		if in.Ready {
			n++
		}
	}
	return n
}

// childrenNotReady is Ready's reason and message while a conflict or a
// refusal holds (Children.NotReady).
func (o *observation) childrenNotReady() (reason, message string, ok bool) {
	if o.children == nil {
		return "", "", false
	}
	return o.children.NotReady()
}

// computeStatus returns the status of gb computed from obs. It never
// changes gb: the conditions keep their lastTransitionTime from gb's
// status while their status holds.
func computeStatus(gb *webappv1.Guestbook, obs *observation) webappv1.GuestbookStatus {
	status := webappv1.GuestbookStatus{
		ObservedGeneration: gb.Generation,
		Active:             obs.active,
		ReadyReplicas:      obs.readyReplicas(),
	}
	if len(obs.standby) > 0 {
		status.Standby = slices.Clone(obs.standby)
	}
	status.Conditions = controllers.MergeConditions(gb.Status.Conditions, readyReasonClasses, gb.Generation,
		readyCondition(obs), availableCondition(obs))
	return status
}

// readyReasonClasses says which reasons of Ready=False the operator (or the
// StatefulSet controller) works on, and which wait for a person; the
// children's (ResourceConflict, ApplyFailed) are the shared ones.
var readyReasonClasses = controllers.WithChildReasons(ReadyReasons.Classes())

// ReadyReasons are the reasons of a Guestbook's Ready; make docs renders
// them in docs/conditions.md.
var ReadyReasons = controllers.Reasons{
	{Reason: webappv1.ReasonInstancesReady, Status: metav1.ConditionTrue,
		Meaning: "The StatefulSet has rolled out, every instance is ready, one is active"},
	{Reason: webappv1.ReasonRollingOut, Class: controllers.Working,
		Meaning: "The StatefulSet has not rolled its current spec out to every instance (its controller has not seen " +
			"the latest generation, an instance runs an older revision, or the update revision is not yet current)"},
	{Reason: webappv1.ReasonInstancesNotReady, Class: controllers.Working,
		Meaning: "Fewer ready instances than `spec.size`, or more instances than it (scaling down)"},
	{Reason: webappv1.ReasonNamespaceNotFound, Class: controllers.Blocked,
		Meaning: "`spec.namespace` does not exist (or is being deleted); the Guestbook starts once it is created"},
	{Reason: webappv1.ReasonSystemNamespaceNotListed, Class: controllers.Blocked,
		Meaning: "`spec.namespace` is a system namespace (`kube-*`) that the OperatorConfiguration's " +
			"`spec.guestbookSystemNamespaces` does not list; nothing is made or relabelled there until an " +
			"administrator lists it"},
	{Reason: webappv1.ReasonResourceConflict, Class: controllers.Blocked,
		Meaning: "The StatefulSet or Service of that name belongs to someone else; left untouched, and no Service " +
			"is made and no Pod relabelled for a StatefulSet someone else runs"},
	{Reason: webappv1.ReasonApplyFailed, Class: controllers.Blocked,
		Meaning: "The API server refused the StatefulSet, Service or ConfigMap, or a Pod's role label (a quota, an " +
			"admission policy, RBAC); the running instances keep being served and the election goes on, but no " +
			"instance is promoted while a demotion is refused; the message is the API server's"},
}

// systemNamespaceMessage says, for a person, why a Guestbook in system
// namespace ns is refused, and how to allow it.
func systemNamespaceMessage(ns string) string {
	return fmt.Sprintf("Namespace %s is a system namespace: the operator makes nothing there for a Guestbook "+
		"unless an administrator lists it in %s of the OperatorConfiguration (docs/security.md); "+
		"list it, or delete this Guestbook",
		ns, settings.GuestbookSystemNamespacesField)
}

// statefulSetRollingOut says, for a person, how far the StatefulSet is from
// running its current spec everywhere; empty once it does. It follows
// kstatus's rules for StatefulSets: the StatefulSet controller saw the
// latest generation, every replica runs the update revision, and that
// revision became the current one.
func statefulSetRollingOut(sts *appsv1.StatefulSet) string {
	if sts == nil {
		return ""
	}
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	st := sts.Status
	switch {
	case st.ObservedGeneration < sts.Generation:
		return fmt.Sprintf("StatefulSet %s/%s has not yet seen generation %d of its spec",
			sts.Namespace, sts.Name, sts.Generation)
	case st.UpdatedReplicas < replicas:
		return fmt.Sprintf("StatefulSet %s/%s is rolling out: %d of %d instances updated",
			sts.Namespace, sts.Name, st.UpdatedReplicas, replicas)
	case st.CurrentRevision != st.UpdateRevision:
		return fmt.Sprintf("StatefulSet %s/%s is rolling out: revision %s is not yet current (%s is)",
			sts.Namespace, sts.Name, st.UpdateRevision, st.CurrentRevision)
	}
	return ""
}

// readyCondition is the Ready condition computed from obs.
func readyCondition(obs *observation) metav1.Condition {
	cond := metav1.Condition{Type: webappv1.ConditionReady, Status: metav1.ConditionFalse}
	ready := obs.readyReplicas()
	rollout := statefulSetRollingOut(obs.statefulSet)
	reason, message, childrenNotReady := obs.childrenNotReady()
	switch {
	case obs.namespaceRefused:
		cond.Reason = webappv1.ReasonSystemNamespaceNotListed
		cond.Message = systemNamespaceMessage(obs.namespace)
	case obs.namespaceMissing:
		cond.Reason = webappv1.ReasonNamespaceNotFound
		cond.Message = fmt.Sprintf("Namespace %s does not exist (or is being deleted); the Guestbook starts once it is created",
			obs.namespace)
	case childrenNotReady:
		cond.Reason, cond.Message = reason, message
	case rollout != "":
		cond.Reason = webappv1.ReasonRollingOut
		cond.Message = fmt.Sprintf("%s; %d of %d instances ready", rollout, ready, obs.size)
	case obs.active == "" || ready != obs.size || int32(len(obs.instances)) != obs.size:
		cond.Reason = webappv1.ReasonInstancesNotReady
		cond.Message = fmt.Sprintf("%d of %d instances ready (%d present)", ready, obs.size, len(obs.instances))
	default:
		cond.Status = metav1.ConditionTrue
		cond.Reason = webappv1.ReasonInstancesReady
		cond.Message = fmt.Sprintf("%d of %d instances ready, %s active", ready, obs.size, obs.active)
	}
	return cond
}

// availableCondition is the Available condition computed from obs. A
// refused write leaves it as the running instances make it: an active
// instance still serves.
func availableCondition(obs *observation) metav1.Condition {
	cond := metav1.Condition{Type: webappv1.ConditionAvailable, Status: metav1.ConditionFalse}
	reason, message, _ := obs.childrenNotReady()
	switch {
	case obs.namespaceRefused:
		cond.Reason = webappv1.ReasonSystemNamespaceNotListed
		cond.Message = fmt.Sprintf("The operator runs no instance in system namespace %s", obs.namespace)
	case obs.namespaceMissing:
		cond.Reason = webappv1.ReasonNamespaceNotFound
		cond.Message = fmt.Sprintf("Namespace %s does not exist", obs.namespace)
	case reason == webappv1.ReasonResourceConflict:
		// Nothing past the conflict was observed: no election ran.
		cond.Reason, cond.Message = reason, message
	case obs.active == "":
		cond.Reason = webappv1.ReasonNoReadyInstance
		cond.Message = "No instance is ready"
	default:
		cond.Status = metav1.ConditionTrue
		cond.Reason = webappv1.ReasonActiveInstanceServing
		cond.Message = fmt.Sprintf("Pod %s/%s serves", obs.namespace, obs.active)
	}
	return cond
}
