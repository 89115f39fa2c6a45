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

package v1

import (
	"regexp"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
)

var (
	specPath        = field.NewPath("spec")
	annotationsPath = field.NewPath("metadata", "annotations")

	nameControl = regexp.MustCompile(examplev1.NameControlPattern)
	drinkForm   = regexp.MustCompile(examplev1.DrinkPattern)
)

// validateDrink returns every rule drink breaks. The CRD schema holds the
// same rules but the last (CEL cannot read annotations); they are checked
// here too as the schema of the version a client writes in applies, not
// the v1 one.
func validateDrink(drink *examplev1.Drink) field.ErrorList {
	errs := validateName(drink.Spec.Name, specPath.Child("name"))
	errs = append(errs, validateDrinkKind(drink.Spec.Drink, specPath.Child("drink"))...)
	errs = append(errs, validateSizeAnnotation(drink.Annotations, annotationsPath)...)
	return errs
}

// validateDrinkUpdate returns the rules the update from old to drink
// breaks in the fields it changes: a value stored before a rule existed
// is kept as long as it is not edited.
func validateDrinkUpdate(old, drink *examplev1.Drink) field.ErrorList {
	var errs field.ErrorList
	if drink.Spec.Name != old.Spec.Name {
		errs = append(errs, validateName(drink.Spec.Name, specPath.Child("name"))...)
	}
	if drink.Spec.Drink != old.Spec.Drink {
		errs = append(errs, validateDrinkKind(drink.Spec.Drink, specPath.Child("drink"))...)
	}
	oldSize, oldOK := old.Annotations[examplev1beta1.SizeAnnotation]
	size, ok := drink.Annotations[examplev1beta1.SizeAnnotation]
	if size != oldSize || ok != oldOK {
		errs = append(errs, validateSizeAnnotation(drink.Annotations, annotationsPath)...)
	}
	return errs
}

// validateName checks spec.name: 1 to MaxNameLength characters, no control
// character.
func validateName(name string, path *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(path, "")}
	case utf8.RuneCountInString(name) > examplev1.MaxNameLength:
		return field.ErrorList{field.TooLong(path, "", examplev1.MaxNameLength)}
	case nameControl.MatchString(name):
		return field.ErrorList{field.Invalid(path, name, examplev1.NameControlMessage)}
	}
	return nil
}

// validateDrinkKind checks spec.drink: 1 to MaxDrinkLength characters of
// lowercase words (DrinkPattern).
func validateDrinkKind(drink string, path *field.Path) field.ErrorList {
	switch {
	case drink == "":
		return field.ErrorList{field.Required(path, "")}
	case utf8.RuneCountInString(drink) > examplev1.MaxDrinkLength:
		return field.ErrorList{field.TooLong(path, "", examplev1.MaxDrinkLength)}
	case !drinkForm.MatchString(drink):
		return field.ErrorList{field.Invalid(path, drink, examplev1.DrinkMessage)}
	}
	return nil
}

// validateSizeAnnotation checks the v1beta1 size kept in the annotation
// examplev1beta1.SizeAnnotation, when present, is a DrinkSize: a v1 client
// could write anything there, which v1beta1 clients would then read as
// spec.drink.size.
func validateSizeAnnotation(annotations map[string]string, path *field.Path) field.ErrorList {
	size, ok := annotations[examplev1beta1.SizeAnnotation]
	if !ok {
		return nil
	}
	for _, s := range examplev1beta1.Sizes {
		if size == string(s) {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path.Key(examplev1beta1.SizeAnnotation), size, examplev1beta1.Sizes)}
}
