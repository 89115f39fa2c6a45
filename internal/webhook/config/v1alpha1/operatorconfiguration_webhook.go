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

// Package v1alpha1 holds the admission webhook of
// config.sunstrider.cn/v1alpha1: the validating webhook of
// OperatorConfiguration, which refuses a change of spec.childAccess by
// whoever may not delegate (access.DelegateVerb). The API server checks
// the rest of the spec (its schema and CEL rules); the OperatorConfiguration
// has nothing to default.
package v1alpha1

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/access"
)

// SetupOperatorConfigurationWebhookWithManager registers the validating
// webhook of OperatorConfiguration with mgr's webhook server; reviewer asks
// whether the author may delegate.
func SetupOperatorConfigurationWebhookWithManager(mgr ctrl.Manager, reviewer *access.Reviewer) error {
	if reviewer == nil {
		return errors.New("the OperatorConfiguration webhook needs an access reviewer")
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &configv1alpha1.OperatorConfiguration{}).
		WithValidator(&OperatorConfigurationValidator{Access: reviewer}).
		Complete(); err != nil {
		return fmt.Errorf("setting up the OperatorConfiguration webhook: %w", err)
	}
	return nil
}

// Two webhooks on one path. The update's fails closed (failurePolicy Fail):
// with no replica answering, no childAccess changes. The create's fails
// open (Ignore): the operator's own init container creates the
// configuration, from the installer's values, before any replica serves,
// and would otherwise wait on itself at the first install (OLM drops the
// matchConditions that spare it the call). The object is named default
// and its controller keeps the settings in effect when it is deleted
// (until a restart), so a create with nobody answering is a narrow window
// that needs the operator down. Each is called only when childAccess
// changes (matchConditions, which only spare a call whose answer is
// known: hack/bundle's skipConditions).
// +kubebuilder:webhook:path=/validate-config-sunstrider-cn-v1alpha1-operatorconfiguration,mutating=false,failurePolicy=fail,sideEffects=None,groups=config.sunstrider.cn,resources=operatorconfigurations,verbs=update,versions=v1alpha1,name=voperatorconfiguration-v1alpha1.sunstrider.cn,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"childaccess-changed","expression":"(has(object.spec) && has(object.spec.childAccess) ? object.spec.childAccess : 'Requester') != (has(oldObject.spec) && has(oldObject.spec.childAccess) ? oldObject.spec.childAccess : 'Requester')"}]}`
// +kubebuilder:webhook:path=/validate-config-sunstrider-cn-v1alpha1-operatorconfiguration,mutating=false,failurePolicy=ignore,sideEffects=None,groups=config.sunstrider.cn,resources=operatorconfigurations,verbs=create,versions=v1alpha1,name=voperatorconfiguration-create-v1alpha1.sunstrider.cn,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"childaccess-not-default","expression":"has(object.spec) && has(object.spec.childAccess) && object.spec.childAccess != 'Requester'"}]}`

// operatorConfigurationsResource is the resource of OperatorConfiguration,
// for the delegate check and its refusal.
var operatorConfigurationsResource = schema.GroupResource{
	Group: configv1alpha1.GroupVersion.Group, Resource: "operatorconfigurations"}

// OperatorConfigurationValidator refuses a change of spec.childAccess by a
// user who may not delegate on operatorconfigurations.
type OperatorConfigurationValidator struct {
	// Access asks the API server; nil allows everything (unit tests).
	Access *access.Reviewer
}

var _ admission.Validator[*configv1alpha1.OperatorConfiguration] = &OperatorConfigurationValidator{}

// ValidateCreate implements admission.Validator: a configuration created
// with a mode other than the default is a change from the default.
func (v *OperatorConfigurationValidator) ValidateCreate(ctx context.Context, cfg *configv1alpha1.OperatorConfiguration) (admission.Warnings, error) {
	return nil, v.checkDelegate(ctx, cfg, nil)
}

// ValidateUpdate implements admission.Validator.
func (v *OperatorConfigurationValidator) ValidateUpdate(ctx context.Context, old, cfg *configv1alpha1.OperatorConfiguration) (admission.Warnings, error) {
	return nil, v.checkDelegate(ctx, cfg, old)
}

// ValidateDelete implements admission.Validator; deleting is allowed: the
// operator keeps the settings in effect until it restarts, and the
// object it then creates again has the installer's initial content.
func (v *OperatorConfigurationValidator) ValidateDelete(context.Context, *configv1alpha1.OperatorConfiguration) (admission.Warnings, error) {
	return nil, nil
}

// checkDelegate refuses, when childAccessChange finds one from old (nil
// on create) to cfg, an author who may not delegate: a Forbidden error
// that names the field, the verb and who may.
func (v *OperatorConfigurationValidator) checkDelegate(ctx context.Context, cfg, old *configv1alpha1.OperatorConfiguration) error {
	from, to, changed := childAccessChange(old, cfg)
	if !changed {
		return nil
	}
	allowed, user, err := v.Access.Allowed(ctx, access.Check{Verb: access.DelegateVerb,
		Group: operatorConfigurationsResource.Group, Resource: operatorConfigurationsResource.Resource, Name: cfg.Name})
	if err != nil {
		return apierrors.NewServiceUnavailable(err.Error())
	}
	if allowed {
		ctrl.LoggerFrom(ctx).Info("childAccess changed", "user", user, "from", from, "to", to)
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Refused: the user may not delegate", "user", user, "from", from, "to", to)
	return apierrors.NewForbidden(operatorConfigurationsResource, cfg.Name, fmt.Errorf(
		"user %q may not change spec.childAccess from %s to %s: that needs the verb %s on %s, beyond update, "+
			"which no built-in or aggregated role (admin, edit) grants; a cluster administrator may change it, or "+
			"grant %s to whoever should with a ClusterRole (docs/security.md)",
		user, from, to, access.DelegateVerb, operatorConfigurationsResource, access.DelegateVerb))
}

// childAccessChange returns the mode old asks for (the default on create,
// old nil) and the one cfg asks for, and whether they differ: unset is
// the default, Requester, so spelling the default out is no change.
func childAccessChange(old, cfg *configv1alpha1.OperatorConfiguration) (from, to configv1alpha1.ChildAccess, changed bool) {
	from = configv1alpha1.ChildAccessRequester
	if old != nil && old.Spec.ChildAccess != "" {
		from = old.Spec.ChildAccess
	}
	to = configv1alpha1.ChildAccessRequester
	if cfg.Spec.ChildAccess != "" {
		to = cfg.Spec.ChildAccess
	}
	return from, to, from != to
}
