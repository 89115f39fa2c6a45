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

package example

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

// notControlledByDrink passes the ConfigMaps whose controller is not a
// Drink; Owns already handles the others.
var notControlledByDrink = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	return !isControlledByDrink(obj)
})

func isControlledByDrink(obj client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		return err == nil && gv.Group == examplev1.GroupVersion.Group && ref.Kind == drinkKind
	}
	return false
}

// drinkForConfigMap maps a ConfigMap to the Drink of the same name and
// namespace, when that Drink exists.
func (r *DrinkReconciler) drinkForConfigMap(ctx context.Context, cm client.Object) []reconcile.Request {
	key := client.ObjectKeyFromObject(cm)
	if err := r.Get(ctx, key, &examplev1.Drink{}); err != nil {
		if !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to get Drink for ConfigMap", "configMap", key)
		}
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}
