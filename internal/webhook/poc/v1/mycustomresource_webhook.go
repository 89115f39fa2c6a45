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

// Package v1 holds the admission webhooks of poc.test.domain/v1: the
// validating webhook of MyCustomResource. MyCustomResource has nothing to
// default (its one field is required and has no sensible default), so it has
// no defaulting webhook: a webhook that changes nothing would only add a
// failure point to every write.
package v1

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/access"
)

// SetupMyCustomResourceWebhookWithManager registers the validating webhook
// of MyCustomResource with mgr's webhook server; reviewer checks that the
// author may read the friend Pod.
func SetupMyCustomResourceWebhookWithManager(mgr ctrl.Manager, reviewer *access.Reviewer) error {
	if reviewer == nil {
		return errors.New("the MyCustomResource webhook needs an access reviewer")
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &pocv1.MyCustomResource{}).
		WithValidator(&MyCustomResourceValidator{Access: reviewer}).
		Complete(); err != nil {
		return fmt.Errorf("setting up the MyCustomResource webhook: %w", err)
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-poc-test-domain-v1-mycustomresource,mutating=false,failurePolicy=fail,sideEffects=None,groups=poc.test.domain,resources=mycustomresources,verbs=create;update,versions=v1,name=vmycustomresource-v1.sunstrider.cn,admissionReviewVersions=v1,timeoutSeconds=5

// MyCustomResourceValidator rejects invalid MyCustomResources (see
// validateMyCustomResource), then those whose author may not read the
// friend Pod (myCustomResourceAccess).
type MyCustomResourceValidator struct {
	// Access checks the author's rights; nil checks nothing (unit tests).
	Access *access.Reviewer
}

var _ admission.Validator[*pocv1.MyCustomResource] = &MyCustomResourceValidator{}

// ValidateCreate implements admission.Validator.
func (v *MyCustomResourceValidator) ValidateCreate(ctx context.Context, obj *pocv1.MyCustomResource) (admission.Warnings, error) {
	return nil, v.validate(ctx, obj)
}

// ValidateUpdate implements admission.Validator. An unchanged spec passes.
func (v *MyCustomResourceValidator) ValidateUpdate(ctx context.Context, old, obj *pocv1.MyCustomResource) (admission.Warnings, error) {
	if old.Spec == obj.Spec {
		return nil, nil
	}
	return nil, v.validate(ctx, obj)
}

// validate checks obj's spec, then its author's access.
func (v *MyCustomResourceValidator) validate(ctx context.Context, obj *pocv1.MyCustomResource) error {
	if err := invalid(ctx, obj, validateMyCustomResource(obj)); err != nil {
		return err
	}
	return v.Access.Review(ctx, myCustomResourcesResource, "MyCustomResource", obj.Name, myCustomResourceAccess(obj))
}

// ValidateDelete implements admission.Validator; deleting is always allowed.
func (v *MyCustomResourceValidator) ValidateDelete(context.Context, *pocv1.MyCustomResource) (admission.Warnings, error) {
	return nil, nil
}

// validateMyCustomResource returns every rule obj breaks.
func validateMyCustomResource(obj *pocv1.MyCustomResource) field.ErrorList {
	return validatePodName(obj.Spec.Name, field.NewPath("spec", "name"))
}

// validatePodName requires a valid Pod name: a DNS-1123 subdomain.
func validatePodName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "the name of the friend Pod")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// invalid turns errs into the API's Invalid error for obj, nil when empty.
func invalid(ctx context.Context, obj *pocv1.MyCustomResource, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Rejected MyCustomResource", "errors", errs.ToAggregate().Error())
	return apierrors.NewInvalid(pocv1.GroupVersion.WithKind("MyCustomResource").GroupKind(), obj.Name, errs)
}
