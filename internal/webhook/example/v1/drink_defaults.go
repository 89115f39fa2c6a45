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
	"strings"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
)

// defaultDrink normalises drink: spec.drink trimmed, its runs of white
// space collapsed to one space and lowercased ("  Green  TEA " becomes
// "green tea"); the v1beta1 size annotation spelt in its canonical case
// ("large" becomes "Large").
func defaultDrink(drink *examplev1.Drink) {
	drink.Spec.Drink = normalizeDrink(drink.Spec.Drink)
	if size, ok := drink.Annotations[examplev1beta1.SizeAnnotation]; ok {
		drink.Annotations[examplev1beta1.SizeAnnotation] = canonicalSize(size)
	}
}

// normalizeDrink returns kind trimmed, with single spaces, lowercased.
func normalizeDrink(kind string) string {
	return strings.ToLower(strings.Join(strings.Fields(kind), " "))
}

// canonicalSize returns the DrinkSize equal to size but for case, size
// itself when there is none.
func canonicalSize(size string) string {
	for _, s := range examplev1beta1.Sizes {
		if strings.EqualFold(size, string(s)) {
			return string(s)
		}
	}
	return size
}
