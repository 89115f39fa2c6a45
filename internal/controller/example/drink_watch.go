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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

// drinkGroupKind is the Drink API's group and kind, in any version.
var drinkGroupKind = examplev1.GroupVersion.WithKind(drinkKind).GroupKind()

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
