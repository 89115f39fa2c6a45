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

package poc

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
)

// observation is what one reconcile saw of the friend Pod. The status is
// computed from it alone.
type observation struct {
	// pod is the friend Pod as read from the API server (only its
	// metadata when it is being deleted), nil when no Pod named spec.name
	// exists in the namespace.
	pod *corev1.Pod
}

// found reports whether the friend exists and is not being deleted.
func (o *observation) found() bool {
	return o.pod != nil && o.pod.DeletionTimestamp == nil
}

// computeStatus returns obj's status from what was observed. It reads
// obj's previous conditions only to keep the lastTransitionTime of those
// whose status holds, and changes nothing of obj.
func computeStatus(obj *pocv1.MyCustomResource, obs *observation) pocv1.MyCustomResourceStatus {
	status := pocv1.MyCustomResourceStatus{ObservedGeneration: obj.Generation, Healthy: obs.found()}
	status.Conditions = controllers.MergeConditions(obj.Status.Conditions, readyReasonClasses, obj.Generation,
		friendFoundCondition(obj, obs), friendReadyCondition(obj, obs), readyCondition(obj, obs))
	return status
}

// readyReasonClasses: a MyCustomResource waits for its friend Pod, which
// comes from elsewhere; none of its reasons needs the operator's user to
// act on the MyCustomResource, so none stalls it. It has no children, so
// none of the shared reasons of a child's write (WithChildReasons), on
// purpose.
var readyReasonClasses = ReadyReasons.Classes()

// ReadyReasons are the reasons of a MyCustomResource's Ready, and of
// FriendFound=True; make docs renders them in docs/conditions.md.
var ReadyReasons = controllers.Reasons{
	{Reason: pocv1.ReasonPodReady, Status: metav1.ConditionTrue, Meaning: "The friend Pod exists and is ready"},
	{Reason: pocv1.ReasonPodNotFound, Class: controllers.Working, Meaning: "No Pod named `spec.name` in the namespace"},
	{Reason: pocv1.ReasonPodDeleting, Class: controllers.Working, Meaning: "The friend Pod is being deleted"},
	{Reason: pocv1.ReasonPodNotReady, Class: controllers.Working,
		Meaning: "The friend Pod is not ready; the message has the Pod's reason"},
	{Reason: pocv1.ReasonPodReadinessUnknown, Status: metav1.ConditionUnknown, Class: controllers.Working,
		Meaning: "The friend Pod reports no readiness yet"},
	{Reason: pocv1.ReasonPodFound, Condition: pocv1.ConditionFriendFound + "=True",
		Meaning: "The friend Pod exists and is not being deleted (`status.Healthy` is true); `Ready` then has " +
			"`FriendReady`'s reason: `PodReady`, `PodNotReady` or `PodReadinessUnknown`"},
}

func friendFoundCondition(obj *pocv1.MyCustomResource, obs *observation) metav1.Condition {
	c := metav1.Condition{Type: pocv1.ConditionFriendFound}
	switch {
	case obs.pod == nil:
		c.Status, c.Reason = metav1.ConditionFalse, pocv1.ReasonPodNotFound
		c.Message = fmt.Sprintf("Pod %q not found in namespace %q", obj.Spec.Name, obj.Namespace)
	case obs.pod.DeletionTimestamp != nil:
		c.Status, c.Reason = metav1.ConditionFalse, pocv1.ReasonPodDeleting
		c.Message = fmt.Sprintf("Pod %q is being deleted", obj.Spec.Name)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, pocv1.ReasonPodFound
		c.Message = fmt.Sprintf("Pod %q exists", obj.Spec.Name)
	}
	return c
}

func friendReadyCondition(obj *pocv1.MyCustomResource, obs *observation) metav1.Condition {
	if !obs.found() {
		c := friendFoundCondition(obj, obs)
		c.Type = pocv1.ConditionFriendReady
		return c
	}
	c := metav1.Condition{Type: pocv1.ConditionFriendReady}
	ready := machinery.PodReadyCondition(obs.pod)
	switch {
	case ready == nil || ready.Status == corev1.ConditionUnknown:
		c.Status, c.Reason = metav1.ConditionUnknown, pocv1.ReasonPodReadinessUnknown
		c.Message = fmt.Sprintf("Pod %q reports no readiness yet", obj.Spec.Name)
	case ready.Status == corev1.ConditionTrue:
		c.Status, c.Reason = metav1.ConditionTrue, pocv1.ReasonPodReady
		c.Message = fmt.Sprintf("Pod %q is ready", obj.Spec.Name)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, pocv1.ReasonPodNotReady
		c.Message = fmt.Sprintf("Pod %q is not ready", obj.Spec.Name)
		if ready.Reason != "" || ready.Message != "" {
			c.Message += fmt.Sprintf(": %s: %s", ready.Reason, ready.Message)
		}
	}
	return c
}

// readyCondition summarises: the first of FriendFound and FriendReady that
// is not True gives its status, reason and message; otherwise True.
func readyCondition(obj *pocv1.MyCustomResource, obs *observation) metav1.Condition {
	for _, c := range []metav1.Condition{friendFoundCondition(obj, obs), friendReadyCondition(obj, obs)} {
		if c.Status != metav1.ConditionTrue {
			c.Type = pocv1.ConditionReady
			return c
		}
	}
	return metav1.Condition{
		Type:    pocv1.ConditionReady,
		Status:  metav1.ConditionTrue,
		Reason:  pocv1.ReasonPodReady,
		Message: fmt.Sprintf("Friend Pod %q exists and is ready", obj.Spec.Name),
	}
}
