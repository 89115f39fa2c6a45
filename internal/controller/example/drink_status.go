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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
)

// computeStatus sets the whole status of drink from the observation. It
// never reads the previous status, except for meta.SetStatusCondition keeping
// the lastTransitionTime of conditions whose status did not change.
func computeStatus(drink *examplev1.Drink, obs configMapObservation) {
	drink.Status.ObservedGeneration = drink.Generation
	drink.Status.ConfigMapName = ""
	if obs.owned {
		drink.Status.ConfigMapName = obs.name
	}
	setConfigMapSyncedCondition(drink, obs)
	setReadyCondition(drink, obs)
	controllers.SetProgressConditions(&drink.Status.Conditions, readyReasonClasses, drink.Generation)
}

// readyReasonClasses says which reasons of Ready=False the operator works
// on, and which wait for a person.
var readyReasonClasses = controllers.ReasonClasses{
	examplev1.ReasonApplyFailed:      controllers.Working,
	examplev1.ReasonApplyRejected:    controllers.Blocked,
	examplev1.ReasonResourceConflict: controllers.Blocked,
}

// rejected tells whether the API server refused the ConfigMap for good:
// invalid, or forbidden other than because its namespace is going away
// (then the Drink goes too).
func rejected(err error) bool {
	if apierrors.IsForbidden(err) {
		return !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
	}
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

func setConfigMapSyncedCondition(drink *examplev1.Drink, obs configMapObservation) {
	setCondition(drink, configMapSyncedCondition(drink, obs))
}

// setReadyCondition sets Ready, which has the status, reason and message of
// ConfigMapSynced: the ConfigMap is the Drink's only child.
func setReadyCondition(drink *examplev1.Drink, obs configMapObservation) {
	c := configMapSyncedCondition(drink, obs)
	c.Type = examplev1.ConditionReady
	setCondition(drink, c)
}

func setCondition(drink *examplev1.Drink, c metav1.Condition) {
	c.ObservedGeneration = drink.Generation
	meta.SetStatusCondition(&drink.Status.Conditions, c)
}

func configMapSyncedCondition(drink *examplev1.Drink, obs configMapObservation) metav1.Condition {
	c := metav1.Condition{Type: examplev1.ConditionConfigMapSynced}
	ref := drink.Namespace + "/" + obs.name
	switch {
	case obs.conflict != nil:
		c.Status, c.Reason = metav1.ConditionFalse, examplev1.ReasonResourceConflict
		c.Message = conflictMessage(ref, obs.conflict)
	case obs.refused != nil && rejected(obs.refused):
		c.Status, c.Reason = metav1.ConditionFalse, examplev1.ReasonApplyRejected
		c.Message = apply.RefusalMessage("ConfigMap", obs.refused)
	case obs.refused != nil:
		c.Status, c.Reason = metav1.ConditionFalse, examplev1.ReasonApplyFailed
		c.Message = apply.RefusalMessage("ConfigMap", obs.refused)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, examplev1.ReasonSynced
		c.Message = fmt.Sprintf("ConfigMap %s holds the drink", ref)
	}
	return c
}

func conflictMessage(ref string, conflict *configMapConflict) string {
	owner := "it has no controller"
	if conflict.controller != "" {
		owner = "it is controlled by " + conflict.controller
	}
	return fmt.Sprintf("ConfigMap %s exists and is not controlled by this Drink (%s); it is left untouched", ref, owner)
}
