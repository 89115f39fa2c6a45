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

// Package v1 holds the admission webhooks of webapp.my.domain/v1: the
// defaulting and validating webhooks of Guestbook.
package v1

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/access"
)

// SetupGuestbookWebhookWithManager registers the defaulting and validating
// webhooks of Guestbook with mgr's webhook server; reviewer checks that the
// author may make the Guestbook's workload, and systemNamespaces returns,
// at each request, the kube-* namespaces Guestbooks may use (the live
// settings' GuestbookSystemNamespaces; nil allows none).
func SetupGuestbookWebhookWithManager(mgr ctrl.Manager, reviewer *access.Reviewer, systemNamespaces func() []string) error {
	if reviewer == nil {
		return errors.New("the Guestbook webhooks need an access reviewer")
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &webappv1.Guestbook{}).
		WithDefaulter(&GuestbookDefaulter{}).
		WithValidator(&GuestbookValidator{Access: reviewer, Reader: mgr.GetAPIReader(), SystemNamespaces: systemNamespaces}).
		Complete(); err != nil {
		return fmt.Errorf("setting up the Guestbook webhooks: %w", err)
	}
	return nil
}

// +kubebuilder:webhook:path=/mutate-webapp-my-domain-v1-guestbook,mutating=true,failurePolicy=fail,sideEffects=None,groups=webapp.my.domain,resources=guestbooks,verbs=create;update,versions=v1,name=mguestbook-v1.sunstrider.cn,admissionReviewVersions=v1,timeoutSeconds=5

// GuestbookDefaulter fills in the defaults of a Guestbook: see
// defaultGuestbook.
type GuestbookDefaulter struct{}

var _ admission.Defaulter[*webappv1.Guestbook] = &GuestbookDefaulter{}

// Default implements admission.Defaulter.
func (d *GuestbookDefaulter) Default(ctx context.Context, gb *webappv1.Guestbook) error {
	defaultGuestbook(gb)
	ctrl.LoggerFrom(ctx).V(1).Info("Defaulted Guestbook")
	return nil
}

// +kubebuilder:webhook:path=/validate-webapp-my-domain-v1-guestbook,mutating=false,failurePolicy=fail,sideEffects=None,groups=webapp.my.domain,resources=guestbooks,verbs=create;update,versions=v1,name=vguestbook-v1.sunstrider.cn,admissionReviewVersions=v1,timeoutSeconds=5

// GuestbookValidator rejects invalid Guestbooks (see validateGuestbook and
// validateGuestbookUpdate) and those in a system namespace the
// OperatorConfiguration does not list (validatePlacement), then those whose
// author may not make their workload (guestbookAccess).
type GuestbookValidator struct {
	// Access checks the author's rights; nil checks nothing (unit tests).
	Access *access.Reviewer
	// Reader reads from the API server whether the ConfigMap a Guestbook
	// names exists, when Access enforces: the operator creates a missing
	// one, which its author must then be allowed to do. nil takes it as
	// missing.
	Reader client.Reader
	// SystemNamespaces returns the kube-* namespaces Guestbooks may use;
	// nil allows none.
	SystemNamespaces func() []string
}

// systemNamespaces returns the kube-* namespaces Guestbooks may use now.
func (v *GuestbookValidator) systemNamespaces() []string {
	if v.SystemNamespaces == nil {
		return nil
	}
	return v.SystemNamespaces()
}

var _ admission.Validator[*webappv1.Guestbook] = &GuestbookValidator{}

// ValidateCreate implements admission.Validator.
func (v *GuestbookValidator) ValidateCreate(ctx context.Context, gb *webappv1.Guestbook) (admission.Warnings, error) {
	errs := append(validateGuestbook(gb), validatePlacement(gb, v.systemNamespaces())...)
	if err := invalid(ctx, gb, errs); err != nil {
		return nil, err
	}
	return nil, v.review(ctx, gb)
}

// ValidateUpdate implements admission.Validator. An unchanged spec passes.
func (v *GuestbookValidator) ValidateUpdate(ctx context.Context, old, gb *webappv1.Guestbook) (admission.Warnings, error) {
	if err := invalid(ctx, gb, validateGuestbookUpdate(old, gb)); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(old.Spec, gb.Spec) {
		return nil, nil
	}
	// A Guestbook stored in a system namespace before the rule (or while
	// the webhook was off) may still be deleted, or have its metadata
	// changed, but not its spec: the controller leaves it Stalled.
	if err := invalid(ctx, gb, validatePlacement(gb, v.systemNamespaces())); err != nil {
		return nil, err
	}
	return nil, v.review(ctx, gb)
}

// review checks that the author of gb may do what the operator will do for
// it, the ConfigMap's creation included when it does not exist yet. The
// ConfigMap is looked up only when the reviewer enforces: Delegated mode
// costs no read.
func (v *GuestbookValidator) review(ctx context.Context, gb *webappv1.Guestbook) error {
	if !v.Access.Enforcing() {
		return nil
	}
	exists, err := configMapExists(ctx, v.Reader, gb)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to look up the Guestbook's ConfigMap")
		// As for a review the API server did not answer: the write is
		// refused (503), never let through unchecked.
		return apierrors.NewServiceUnavailable(err.Error())
	}
	return v.Access.Review(ctx, guestbooksResource, "Guestbook", gb.Name, guestbookAccess(gb, exists))
}

// ValidateDelete implements admission.Validator; deleting is always allowed.
func (v *GuestbookValidator) ValidateDelete(context.Context, *webappv1.Guestbook) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns errs into the API's Invalid error for gb, nil when empty.
func invalid(ctx context.Context, gb *webappv1.Guestbook, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Rejected Guestbook", "errors", errs.ToAggregate().Error())
	return apierrors.NewInvalid(webappv1.GroupVersion.WithKind("Guestbook").GroupKind(), gb.Name, errs)
}
