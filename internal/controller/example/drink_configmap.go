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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/apply"
)

// drinkKind is the kind of the Drink API.
const drinkKind = "Drink"

// Data keys of a Drink's ConfigMap.
const (
	configMapKeyName  = "name"
	configMapKeyDrink = "drink"
)

// desiredConfigMap returns the ConfigMap a Drink wants: controlled by the
// Drink, labelled as the operator's, holding the spec, with the hash of this
// configuration in apply.HashAnnotation.
func desiredConfigMap(drink *examplev1.Drink) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      drink.Name,
			Namespace: drink.Namespace,
			Labels:    map[string]string{apply.ManagedByLabel: apply.ManagedByValue},
			// Controller and BlockOwnerDeletion are true.
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(drink, examplev1.GroupVersion.WithKind(drinkKind)),
			},
		},
		Data: map[string]string{
			configMapKeyName:  drink.Spec.Name,
			configMapKeyDrink: drink.Spec.Drink,
		},
	}
	if err := apply.SetHash(cm); err != nil {
		return nil, err
	}
	return cm, nil
}

// reconcileConfigMap makes the Drink's ConfigMap hold its spec through
// the shared child path (Children), unless a ConfigMap of that name exists
// that the Drink does not control. It returns an error only when the API
// server did not answer (or the ConfigMap could not be encoded).
func (r *DrinkReconciler) reconcileConfigMap(ctx context.Context, s *drinkScope) error {
	desired, err := desiredConfigMap(s.drink)
	if err != nil {
		return err
	}
	live, err := s.children.Ensure(ctx, desired, &corev1.ConfigMap{})
	if err != nil {
		return err
	}
	s.observation.configMap, _ = live.(*corev1.ConfigMap)
	return nil
}
