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

// Package v1 holds the admission webhooks of apps.sunstrider.cn/v1: the
// defaulting and validating webhooks of Application.
package v1

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/access"
)

// SetupApplicationWebhookWithManager registers the defaulting and
// validating webhooks of Application with mgr's webhook server.
func SetupApplicationWebhookWithManager(mgr ctrl.Manager, reviewer *access.Reviewer) error {
	if reviewer == nil {
		return errors.New("the Application webhooks need an access reviewer")
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &sunappsv1.Application{}).
		WithDefaulter(&ApplicationDefaulter{}).
		WithValidator(&ApplicationValidator{Access: reviewer}).
		Complete(); err != nil {
		return fmt.Errorf("setting up the Application webhooks: %w", err)
	}
	return nil
}

// The mutating webhook is called only when defaultApplication has something
// to set (matchConditions, evaluated by the API server): an Application that
// spells out its selector, the template labels the selector names and every
// port's targetPort (replicas and protocol come from the CRD's defaults)
// costs one webhook call instead of two. The condition is true whenever
// defaultApplication would change the object; FuzzApplication checks it.
// OLM cannot express matchConditions, so the bundle's webhook is called
// every time, with the same result (hack/bundle).
// +kubebuilder:webhook:path=/mutate-apps-sunstrider-cn-v1-application,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps.sunstrider.cn,resources=applications,verbs=create;update,versions=v1,name=mapplication-v1.sunstrider.cn,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"defaults-to-set","expression":"!has(object.spec) || !has(object.spec.deployment) || !has(object.spec.deployment.replicas) || !has(object.spec.deployment.selector) || ((!has(object.spec.deployment.selector.matchLabels) || size(object.spec.deployment.selector.matchLabels) == 0) && (!has(object.spec.deployment.selector.matchExpressions) || size(object.spec.deployment.selector.matchExpressions) == 0)) || (has(object.spec.deployment.selector.matchLabels) && object.spec.deployment.selector.matchLabels.exists(k, !has(object.spec.deployment.template) || !has(object.spec.deployment.template.metadata) || !has(object.spec.deployment.template.metadata.labels) || !(k in object.spec.deployment.template.metadata.labels))) || (has(object.spec.service) && has(object.spec.service.ports) && object.spec.service.ports.exists(p, !has(p.protocol) || !has(p.targetPort) || (type(p.targetPort) == int && p.targetPort == 0)))"}]}`

// ApplicationDefaulter fills in the defaults of an Application: see
// defaultApplication.
type ApplicationDefaulter struct{}

var _ admission.Defaulter[*sunappsv1.Application] = &ApplicationDefaulter{}

// Default implements admission.Defaulter.
func (d *ApplicationDefaulter) Default(ctx context.Context, app *sunappsv1.Application) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return fmt.Errorf("defaulting Application %s/%s: %w", app.Namespace, app.Name, err)
	}
	var old *sunappsv1.Application
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old = &sunappsv1.Application{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("decoding the old Application: %v", err))
		}
	}
	defaultApplication(app, old)
	ctrl.LoggerFrom(ctx).V(1).Info("Defaulted Application", "operation", req.Operation)
	return nil
}

// The validating webhook is not called for an update that leaves the spec
// and the labels as they are (matchConditions): ValidateUpdate passes those
// without a look, so an annotation or finalizer written by another tool
// costs no call and goes through while no replica answers. The labels are
// looked at: the operator copies them onto the children. The condition
// compares the stored JSON: any difference, even one the typed comparison
// would ignore, calls the webhook.
// +kubebuilder:webhook:path=/validate-apps-sunstrider-cn-v1-application,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps.sunstrider.cn,resources=applications,verbs=create;update,versions=v1,name=vapplication-v1.sunstrider.cn,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"matchConditions":[{"name":"spec-or-labels-changed","expression":"request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec || has(object.metadata.labels) != has(oldObject.metadata.labels) || (has(object.metadata.labels) && object.metadata.labels != oldObject.metadata.labels)"}]}`

// ApplicationValidator rejects invalid Applications (see
// validateApplication and validateApplicationUpdate), then those whose
// author may not make their children (applicationAccess).
type ApplicationValidator struct {
	// Access checks the author's rights; nil checks nothing (unit tests).
	Access *access.Reviewer
}

var _ admission.Validator[*sunappsv1.Application] = &ApplicationValidator{}

// ValidateCreate implements admission.Validator.
func (v *ApplicationValidator) ValidateCreate(ctx context.Context, app *sunappsv1.Application) (admission.Warnings, error) {
	if err := invalid(ctx, app, validateApplication(app)); err != nil {
		return nil, err
	}
	return nil, v.Access.Review(ctx, applicationsResource, "Application", app.Name, applicationAccess(nil, app))
}

// ValidateUpdate implements admission.Validator. An update that leaves the
// spec as it is passes the rules, so that an Application stored before a
// rule existed can still get its metadata (finalizers, labels) changed.
// Its author's rights are checked unless the labels stay as they are too:
// the operator copies them onto the children, so a new label is a write to
// the Deployment and the Service; annotations and finalizers make the
// operator do nothing new.
func (v *ApplicationValidator) ValidateUpdate(ctx context.Context, oldApp, app *sunappsv1.Application) (admission.Warnings, error) {
	if err := invalid(ctx, app, validateApplicationUpdate(oldApp, app)); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(oldApp.Spec, app.Spec) && maps.Equal(oldApp.Labels, app.Labels) {
		return nil, nil
	}
	return nil, v.Access.Review(ctx, applicationsResource, "Application", app.Name, applicationAccess(oldApp, app))
}

// ValidateDelete implements admission.Validator; deleting is always allowed.
func (v *ApplicationValidator) ValidateDelete(context.Context, *sunappsv1.Application) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns errs into the API's Invalid error for app, nil when empty.
func invalid(ctx context.Context, app *sunappsv1.Application, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Rejected Application", "errors", errs.ToAggregate().Error())
	return apierrors.NewInvalid(sunappsv1.GroupVersion.WithKind("Application").GroupKind(), app.Name, errs)
}
