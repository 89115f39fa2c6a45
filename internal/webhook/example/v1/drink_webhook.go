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

// Package v1 holds the admission and conversion webhooks of Drink
// (example.com): defaulting and validation of the hub version v1, which the
// API server also applies to Drinks written as v1alpha1 or v1beta1 (they
// are converted to v1 first), and the conversion between the three versions.
package v1

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/access"
)

// SetupDrinkWebhookWithManager registers the defaulting and validating
// webhooks of Drink, and the conversion webhook (/convert) of its versions,
// with mgr's webhook server. mgr's scheme must hold example.com v1alpha1,
// v1beta1 and v1. reviewer checks that the author may make the Drink's
// ConfigMap.
func SetupDrinkWebhookWithManager(mgr ctrl.Manager, reviewer *access.Reviewer) error {
	if reviewer == nil {
		return errors.New("the Drink webhooks need an access reviewer")
	}
	convertible, err := conversion.IsConvertible(mgr.GetScheme(), &examplev1.Drink{})
	if err != nil {
		return fmt.Errorf("checking the Drink conversion: %w", err)
	}
	if !convertible {
		return fmt.Errorf("the manager's scheme must hold Drink in %s v1alpha1, v1beta1 and v1 for the conversion webhook",
			examplev1.GroupVersion.Group)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &examplev1.Drink{}).
		WithDefaulter(&DrinkDefaulter{}).
		WithValidator(&DrinkValidator{Access: reviewer}).
		Complete(); err != nil {
		return fmt.Errorf("setting up the Drink webhooks: %w", err)
	}
	return nil
}

// +kubebuilder:webhook:path=/mutate-example-com-v1-drink,mutating=true,failurePolicy=fail,sideEffects=None,groups=example.com,resources=drinks,verbs=create;update,versions=v1,name=mdrink-v1.example.com,admissionReviewVersions=v1,timeoutSeconds=5

// DrinkDefaulter fills in the defaults of a Drink: see defaultDrink.
type DrinkDefaulter struct{}

var _ admission.Defaulter[*examplev1.Drink] = &DrinkDefaulter{}

// Default implements admission.Defaulter.
func (d *DrinkDefaulter) Default(ctx context.Context, drink *examplev1.Drink) error {
	defaultDrink(drink)
	ctrl.LoggerFrom(ctx).V(1).Info("Defaulted Drink")
	return nil
}

// +kubebuilder:webhook:path=/validate-example-com-v1-drink,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.com,resources=drinks,verbs=create;update,versions=v1,name=vdrink-v1.example.com,admissionReviewVersions=v1,timeoutSeconds=5

// DrinkValidator rejects invalid Drinks (see validateDrink and
// validateDrinkUpdate), then those whose author may not make their
// ConfigMap (drinkAccess).
type DrinkValidator struct {
	// Access checks the author's rights; nil checks nothing (unit tests).
	Access *access.Reviewer
}

var _ admission.Validator[*examplev1.Drink] = &DrinkValidator{}

// ValidateCreate implements admission.Validator.
func (v *DrinkValidator) ValidateCreate(ctx context.Context, drink *examplev1.Drink) (admission.Warnings, error) {
	if err := invalid(ctx, drink, validateDrink(drink)); err != nil {
		return nil, err
	}
	return nil, v.Access.Review(ctx, drinksResource, "Drink", drink.Name, drinkAccess(drink))
}

// ValidateUpdate implements admission.Validator. Only the fields the update
// changes are checked, so that a Drink stored before a rule existed can
// still get its metadata changed; such an update makes the operator do
// nothing new, so only a changed spec is checked for access.
func (v *DrinkValidator) ValidateUpdate(ctx context.Context, oldDrink, drink *examplev1.Drink) (admission.Warnings, error) {
	if err := invalid(ctx, drink, validateDrinkUpdate(oldDrink, drink)); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(oldDrink.Spec, drink.Spec) {
		return nil, nil
	}
	return nil, v.Access.Review(ctx, drinksResource, "Drink", drink.Name, drinkAccess(drink))
}

// ValidateDelete implements admission.Validator; deleting is always allowed.
func (v *DrinkValidator) ValidateDelete(context.Context, *examplev1.Drink) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns errs into the API's Invalid error for drink, nil when empty.
func invalid(ctx context.Context, drink *examplev1.Drink, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Rejected Drink", "errors", errs.ToAggregate().Error())
	return apierrors.NewInvalid(examplev1.GroupVersion.WithKind("Drink").GroupKind(), drink.Name, errs)
}
