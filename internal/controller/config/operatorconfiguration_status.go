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

package config

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/settings"
)

// observation is what one reconcile resolved of the configuration. Status
// is computed from it alone.
type observation struct {
	// inEffect are the settings this process has in effect: the live
	// fields as resolved, the others as it started.
	inEffect settings.Settings
	// refused are the fields that cannot be applied (their value in
	// effect is kept).
	refused []configv1alpha1.RefusedField
	// restart names the fields that changed and take effect at start.
	restart []string
	// unenforced, when set, says why no access check runs at admission
	// (access.Webhooks): status.effective.childAccess says Unenforced.
	unenforced string
}

// readyReasonClasses is the OperatorConfiguration's Reconciling/Stalled
// policy. It has no children: none of the shared child reasons.
var readyReasonClasses = ReadyReasons.Classes()

// ReadyReasons are the reasons of the OperatorConfiguration's Ready; make
// docs renders them in docs/conditions.md.
var ReadyReasons = controllers.Reasons{
	{Reason: configv1alpha1.ReasonApplied, Status: metav1.ConditionTrue,
		Meaning: "Every field of the spec is in effect (`status.effective`)"},
	{Reason: configv1alpha1.ReasonRestartRequired, Class: controllers.Working,
		Meaning: "A field that applies only at start (`controllers`, `watchNamespaces`) changed: the operator writes " +
			"this status, records a Normal event, then exits for its Deployment to start it again"},
	{Reason: configv1alpha1.ReasonRefused, Class: controllers.Blocked,
		Meaning: "A field cannot be applied (a namespace of `watchNamespaces` does not exist, a limit below its " +
			"request): `status.refused` names each, the value in effect stays in `status.effective`, the other fields " +
			"apply (Warning event)"},
	{Condition: configv1alpha1.ConditionAccessChecks + "=True", Reason: configv1alpha1.ReasonEnforced,
		Meaning: "The admission webhooks that check a requester's rights (`spec.childAccess`) and an Application's size " +
			"are served and registered: `status.effective.childAccess` is the mode the spec asks for"},
	{Condition: configv1alpha1.ConditionAccessChecks + "=False", Reason: configv1alpha1.ReasonUnenforced,
		Meaning: "No access check runs at admission: the operator serves no webhooks (`--enable-webhooks=false`, the " +
			"chart's `webhook.enabled=false`, no certificate Secret) or no ValidatingWebhookConfiguration registers them " +
			"(`make install` and `make run`); the message says which and how to turn them on. " +
			"`status.effective.childAccess` says `Unenforced`, `sunstrider_operator_access_checks_enforced` is 0 (alert " +
			"`SunstriderAccessChecksUnenforced`), Warning event. Ready does not depend on it"},
}

// computeStatus returns cfg's status from what was observed: what is in
// effect, what was refused and whether a restart is under way. A new
// value, cfg is left as it is; conditions keep their lastTransitionTime
// from cfg's while their status holds.
func computeStatus(cfg *configv1alpha1.OperatorConfiguration, obs *observation) configv1alpha1.OperatorConfigurationStatus {
	ready := readyConditionFor(obs.refused, obs.restart, cfg.Generation)
	checks := metav1.Condition{Type: configv1alpha1.ConditionAccessChecks, Status: metav1.ConditionTrue,
		ObservedGeneration: cfg.Generation, Reason: configv1alpha1.ReasonEnforced,
		Message: "The admission webhooks that check a requester's rights are served and registered"}
	effective := obs.inEffect.Spec()
	if obs.unenforced != "" {
		// The mode the spec asks for is not what happens: say what does.
		effective.ChildAccess = configv1alpha1.ChildAccessUnenforced
		checks.Status, checks.Reason = metav1.ConditionFalse, configv1alpha1.ReasonUnenforced
		checks.Message = "No access check runs: " + obs.unenforced
		if ready.Status == metav1.ConditionTrue {
			ready.Message = "The configuration is in effect, but for spec.childAccess: no access check runs (AccessChecks)"
		}
	}
	status := configv1alpha1.OperatorConfigurationStatus{
		ObservedGeneration: cfg.Generation,
		Effective:          effective,
		Refused:            slices.Clone(obs.refused),
		Conditions: controllers.MergeConditions(cfg.Status.Conditions, readyReasonClasses, cfg.Generation,
			checks, ready),
	}
	return status
}

// readyConditionFor is Ready for an observation: refused fields first (a
// person must act), then a pending restart, else Applied.
func readyConditionFor(refused []configv1alpha1.RefusedField, restart []string, generation int64) metav1.Condition {
	c := metav1.Condition{
		Type:               configv1alpha1.ConditionReady,
		Status:             metav1.ConditionTrue,
		ObservedGeneration: generation,
		Reason:             configv1alpha1.ReasonApplied,
		Message:            "The configuration is in effect",
	}
	switch {
	case len(refused) > 0:
		msgs := make([]string, len(refused))
		for i, f := range refused {
			msgs[i] = f.Field + ": " + f.Message
		}
		c.Status, c.Reason = metav1.ConditionFalse, configv1alpha1.ReasonRefused
		c.Message = fmt.Sprintf("Refused, the value in effect (status.effective) is kept: %s", strings.Join(msgs, "; "))
		if len(restart) > 0 {
			c.Message += fmt.Sprintf(". The operator restarts to apply %s", strings.Join(restart, " and "))
		}
	case len(restart) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, configv1alpha1.ReasonRestartRequired
		c.Message = fmt.Sprintf("%s take effect at start: the operator restarts", strings.Join(restart, " and "))
	}
	return c
}

func readyCondition(cfg *configv1alpha1.OperatorConfiguration) *metav1.Condition {
	return meta.FindStatusCondition(cfg.Status.Conditions, configv1alpha1.ConditionReady)
}

func accessChecksCondition(cfg *configv1alpha1.OperatorConfiguration) *metav1.Condition {
	return meta.FindStatusCondition(cfg.Status.Conditions, configv1alpha1.ConditionAccessChecks)
}
