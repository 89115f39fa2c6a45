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

package example

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	controllers "sunstrider.cn/operator/internal/controller"
)

// observation is what one reconcile saw of a Drink's world. The status is
// computed from it alone.
type observation struct {
	// configMap is the Drink's ConfigMap as last seen: after a refused
	// write, as it was. nil when none exists that the Drink controls.
	configMap *corev1.ConfigMap
	// children holds the API server's answers to the reconcile's reads and
	// writes: Ready's reason and message while a conflict or a refusal
	// holds (NotReady).
	children *controllers.Children
}

// computeStatus returns drink's status from what was observed. It reads
// drink's previous conditions only to keep the lastTransitionTime of those
// whose status holds, and changes nothing of drink.
func computeStatus(drink *examplev1.Drink, obs *observation) examplev1.DrinkStatus {
	status := examplev1.DrinkStatus{ObservedGeneration: drink.Generation}
	if obs.configMap != nil {
		status.ConfigMapName = obs.configMap.Name
	}
	synced := configMapSyncedCondition(drink, obs)
	// Ready has the status, reason and message of ConfigMapSynced: the
	// ConfigMap is the Drink's only child.
	ready := synced
	ready.Type = examplev1.ConditionReady
	status.Conditions = controllers.MergeConditions(drink.Status.Conditions, readyReasonClasses, drink.Generation, synced, ready)
	return status
}

// readyReasonClasses says which reasons of Ready=False the operator works
// on, and which wait for a person: only the shared ones of a child's read
// and write (ResourceConflict, ApplyFailed; controllers.Policy).
var readyReasonClasses = controllers.WithChildReasons(ReadyReasons.Classes())

// ReadyReasons are the reasons of a Drink's Ready (and ConfigMapSynced);
// make docs renders them in docs/conditions.md.
var ReadyReasons = controllers.Reasons{
	{Reason: examplev1.ReasonSynced, Status: metav1.ConditionTrue, Meaning: "The ConfigMap holds the Drink's spec"},
	{Reason: examplev1.ReasonApplyFailed, Class: controllers.Blocked,
		Meaning: "The API server refused the ConfigMap: as invalid (waits for a new spec) or otherwise (RBAC, an " +
			"admission policy, a quota; retried with backoff). The ConfigMap already there is kept and still named in " +
			"`status.configMapName`; the message is the API server's"},
	{Reason: examplev1.ReasonResourceConflict, Class: controllers.Blocked,
		Meaning: "A ConfigMap of that name belongs to someone else; never overwritten (Warning event)"},
}

// configMapSyncedCondition is True when the ConfigMap holds the Drink's
// spec; while a conflict or a refusal holds, False with the shared reason
// and message (Children.NotReady).
func configMapSyncedCondition(drink *examplev1.Drink, obs *observation) metav1.Condition {
	c := metav1.Condition{Type: examplev1.ConditionConfigMapSynced}
	if reason, message, ok := obs.children.NotReady(); ok {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, reason, message
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, examplev1.ReasonSynced
	c.Message = fmt.Sprintf("ConfigMap %s/%s holds the drink", drink.Namespace, drink.Name)
	return c
}
