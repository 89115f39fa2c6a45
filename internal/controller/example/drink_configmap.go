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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// Event reasons and actions of the Drink controller, emitted on transitions
// only.
const (
	eventConfigMapCreated = "ConfigMapCreated"
	eventConfigMapUpdated = "ConfigMapUpdated"
	actionCreate          = "Create"
	actionUpdate          = "Update"
)

// configMapObservation is what one reconcile saw of (and did to) the
// Drink's ConfigMap.
type configMapObservation struct {
	// name is the name of the ConfigMap.
	name string
	// owned is true when the ConfigMap exists, is controlled by the Drink
	// and holds its spec (already, or after this reconcile applied it).
	owned bool
	// conflict is set when a ConfigMap of that name exists and is not
	// controlled by the Drink.
	conflict *configMapConflict
	// refused is the API server's answer when it refused the ConfigMap.
	refused error
	// err is the failure to reach the API server (or to encode the
	// ConfigMap): the reconcile is retried and the status left as it is.
	err error
	// stale is true when the cached ConfigMap was older than the live one:
	// nothing was changed and the status must not be computed from it.
	stale bool
}

// configMapConflict describes a ConfigMap the Drink does not control.
type configMapConflict struct {
	// controller is "Kind/name" of the ConfigMap's controller, empty when
	// it has none.
	controller string
}

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

// reconcileConfigMap makes the Drink's ConfigMap hold its spec through the
// shared child path (apply.Applier), unless a ConfigMap of that name exists
// that the Drink does not control.
func (r *DrinkReconciler) reconcileConfigMap(ctx context.Context, drink *examplev1.Drink) configMapObservation {
	obs := configMapObservation{name: drink.Name}
	desired, err := desiredConfigMap(drink)
	if err != nil {
		obs.err = err
		return obs
	}
	key := client.ObjectKeyFromObject(desired)
	live := &corev1.ConfigMap{}
	applier := &apply.Applier{Client: r.Client, APIReader: r.APIReader}
	found, conflict, err := applier.Observe(ctx, drink.UID, key, live)
	switch {
	case err != nil:
		obs.err = err
		return obs
	case conflict != "":
		obs.conflict = &configMapConflict{controller: controllerOf(live)}
		return obs
	}
	var current client.Object
	if found {
		current = live
	}
	out, err := applier.Write(ctx, desired, current)
	switch {
	case err != nil:
		obs.err = err
		return obs
	case out.Stale:
		obs.stale = true
		return obs
	case out.Rejected != nil:
		obs.refused = out.Rejected
		return obs
	}
	obs.owned = true

	log := ctrl.LoggerFrom(ctx)
	switch out.Action {
	case apply.Created:
		log.Info("Created ConfigMap", "configMap", key)
		r.Recorder.Eventf(drink, nil, corev1.EventTypeNormal, eventConfigMapCreated, actionCreate,
			"Created ConfigMap %s", key)
	case apply.Updated:
		log.Info("Updated ConfigMap", "configMap", key)
		r.Recorder.Eventf(drink, nil, corev1.EventTypeNormal, eventConfigMapUpdated, actionUpdate,
			"Updated ConfigMap %s to match the Drink", key)
	case apply.Unchanged:
	}
	return obs
}

// controllerOf returns "Kind/name" of obj's controller, empty when none.
func controllerOf(obj metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return ""
	}
	return ref.Kind + "/" + ref.Name
}
