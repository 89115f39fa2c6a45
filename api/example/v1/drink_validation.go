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

// Validation rules of a Drink, shared by the CRD schema markers of
// drink_types.go and the admission webhook, so that a rejection reads the
// same whichever of the two caught it. The markers cannot reference Go
// constants: TestCRDValidationMessages keeps both in step.
const (
	// MaxNameLength bounds spec.name, in characters.
	MaxNameLength = 253

	// MaxDrinkLength bounds spec.drink, in characters.
	MaxDrinkLength = 253

	// NameControlPattern matches a control character (RE2, as in CEL).
	NameControlPattern = `[[:cntrl:]]`

	// NameControlMessage rejects a spec.name holding a control character.
	NameControlMessage = "must not contain control characters"

	// DrinkPattern is the form of spec.drink (RE2, as in CEL).
	DrinkPattern = `^[a-z0-9]+([ -][a-z0-9]+)*$`

	// DrinkMessage rejects a spec.drink not matching DrinkPattern.
	DrinkMessage = "must be lowercase words of a-z and 0-9 separated by single spaces or hyphens"
)
