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
	"k8s.io/apimachinery/pkg/runtime/schema"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/access"
)

// drinksResource is the resource of Drink, for its refusals.
var drinksResource = schema.GroupResource{Group: examplev1.GroupVersion.Group, Resource: "drinks"}

// drinkAccess returns what the operator does for drink, which its author
// must be allowed to do: create and update its ConfigMap in the Drink's
// namespace.
func drinkAccess(drink *examplev1.Drink) []access.Check {
	return access.Writes("", "configmaps", drink.Namespace)
}
