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

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	controllers "sunstrider.cn/operator/internal/controller"
)

// observation is what one reconcile saw of a Guestbook's world. The status
// is computed from it alone.
type observation struct {
	// namespace is spec.namespace (defaulted).
	namespace string
	// namespaceMissing is set when the namespace does not exist or is
	// terminating; nothing else was observed then.
	namespaceMissing bool
	// conflict names the child that exists but belongs to someone else;
	// nothing after it was observed then.
	conflict string
	// refused says, for a person, which child's write the API server
	// refused and why; the workload already running is still observed.
	refused string
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

func (o observation) readyReplicas() int32 {
	var n int32
	for _, in := range o.instances {
		if in.Ready {
			n++
		}
	}
	return n
}

// setStatus computes the status of gb from obs.
func setStatus(gb *webappv1.Guestbook, obs observation) {
	gb.Status.ObservedGeneration = gb.Generation
	gb.Status.Active = obs.active
	gb.Status.Standby = nil
	if len(obs.standby) > 0 {
		gb.Status.Standby = obs.standby
	}
	gb.Status.ReadyReplicas = obs.readyReplicas()
	setReadyCondition(gb, obs)
	setAvailableCondition(gb, obs)
	controllers.SetProgressConditions(&gb.Status.Conditions, readyReasonClasses, gb.Generation)
}

// readyReasonClasses says which reasons of Ready=False the operator (or the
// StatefulSet controller) works on, and which wait for a person.
var readyReasonClasses = controllers.ReasonClasses{
	webappv1.ReasonRollingOut:        controllers.Working,
	webappv1.ReasonInstancesNotReady: controllers.Working,
	webappv1.ReasonNamespaceNotFound: controllers.Blocked,
	webappv1.ReasonResourceConflict:  controllers.Blocked,
	webappv1.ReasonApplyFailed:       controllers.Blocked,
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

// setReadyCondition sets the Ready condition of gb from obs.
func setReadyCondition(gb *webappv1.Guestbook, obs observation) {
	cond := metav1.Condition{Type: webappv1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: gb.Generation}
	ready := obs.readyReplicas()
	rollout := statefulSetRollingOut(obs.statefulSet)
	switch {
	case obs.namespaceMissing:
		cond.Reason = webappv1.ReasonNamespaceNotFound
		cond.Message = fmt.Sprintf("Namespace %s does not exist (or is being deleted); the Guestbook starts once it is created",
			obs.namespace)
	case obs.conflict != "":
		cond.Reason = webappv1.ReasonResourceConflict
		cond.Message = obs.conflict
	case obs.refused != "":
		cond.Reason = webappv1.ReasonApplyFailed
		cond.Message = obs.refused
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
	meta.SetStatusCondition(&gb.Status.Conditions, cond)
}

// setAvailableCondition sets the Available condition of gb from obs.
func setAvailableCondition(gb *webappv1.Guestbook, obs observation) {
	cond := metav1.Condition{Type: webappv1.ConditionAvailable, Status: metav1.ConditionFalse, ObservedGeneration: gb.Generation}
	switch {
	case obs.namespaceMissing:
		cond.Reason = webappv1.ReasonNamespaceNotFound
		cond.Message = fmt.Sprintf("Namespace %s does not exist", obs.namespace)
	case obs.conflict != "":
		cond.Reason = webappv1.ReasonResourceConflict
		cond.Message = obs.conflict
	case obs.active == "":
		cond.Reason = webappv1.ReasonNoReadyInstance
		cond.Message = "No instance is ready"
	default:
		cond.Status = metav1.ConditionTrue
		cond.Reason = webappv1.ReasonActiveInstanceServing
		cond.Message = fmt.Sprintf("Pod %s/%s serves", obs.namespace, obs.active)
	}
	meta.SetStatusCondition(&gb.Status.Conditions, cond)
}
