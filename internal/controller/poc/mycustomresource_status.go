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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	controllers "sunstrider.cn/operator/internal/controller"
)

// friendObservation is what one reconcile saw of the friend Pod.
type friendObservation struct {
	// pod is the friend Pod as read from the API server (only its
	// metadata when it is being deleted), nil when no Pod named spec.name
	// exists in the namespace.
	pod *corev1.Pod
}

// found reports whether the friend exists and is not being deleted.
func (o friendObservation) found() bool {
	return o.pod != nil && o.pod.DeletionTimestamp == nil
}

// computeStatus sets the whole status of obj from the observation. It never
// reads the previous status, except for meta.SetStatusCondition keeping the
// lastTransitionTime of conditions whose status did not change.
func computeStatus(obj *pocv1.MyCustomResource, obs friendObservation) {
	obj.Status.ObservedGeneration = obj.Generation
	obj.Status.Healthy = obs.found()
	setFriendFoundCondition(obj, obs)
	setFriendReadyCondition(obj, obs)
	setReadyCondition(obj, obs)
	controllers.SetProgressConditions(&obj.Status.Conditions, readyReasonClasses, obj.Generation)
}

// readyReasonClasses: a MyCustomResource waits for its friend Pod, which
// comes from elsewhere; none of its reasons needs the operator's user to
// act on the MyCustomResource, so none stalls it.
var readyReasonClasses = controllers.ReasonClasses{
	pocv1.ReasonPodNotFound:         controllers.Working,
	pocv1.ReasonPodDeleting:         controllers.Working,
	pocv1.ReasonPodNotReady:         controllers.Working,
	pocv1.ReasonPodReadinessUnknown: controllers.Working,
}

func setFriendFoundCondition(obj *pocv1.MyCustomResource, obs friendObservation) {
	setCondition(obj, friendFoundCondition(obj, obs))
}

func setFriendReadyCondition(obj *pocv1.MyCustomResource, obs friendObservation) {
	setCondition(obj, friendReadyCondition(obj, obs))
}

func setReadyCondition(obj *pocv1.MyCustomResource, obs friendObservation) {
	setCondition(obj, readyCondition(obj, obs))
}

func setCondition(obj *pocv1.MyCustomResource, c metav1.Condition) {
	c.ObservedGeneration = obj.Generation
	meta.SetStatusCondition(&obj.Status.Conditions, c)
}

func friendFoundCondition(obj *pocv1.MyCustomResource, obs friendObservation) metav1.Condition {
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

func friendReadyCondition(obj *pocv1.MyCustomResource, obs friendObservation) metav1.Condition {
	if !obs.found() {
		c := friendFoundCondition(obj, obs)
		c.Type = pocv1.ConditionFriendReady
		return c
	}
	c := metav1.Condition{Type: pocv1.ConditionFriendReady}
	ready := controllers.PodReadyCondition(obs.pod)
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
func readyCondition(obj *pocv1.MyCustomResource, obs friendObservation) metav1.Condition {
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
