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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
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
	// err is the error met while reading or applying the ConfigMap.
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

// reconcileConfigMap makes the Drink's ConfigMap hold its spec, unless a
// ConfigMap of that name exists that the Drink does not control. It applies
// only when the live ConfigMap differs from the desired one.
func (r *DrinkReconciler) reconcileConfigMap(ctx context.Context, drink *examplev1.Drink) configMapObservation {
	obs := configMapObservation{name: drink.Name}
	desired, err := desiredConfigMap(drink)
	if err != nil {
		obs.err = err
		return obs
	}
	key := client.ObjectKeyFromObject(desired)
	live, err := r.liveConfigMap(ctx, key)
	if err != nil {
		obs.err = err
		return obs
	}
	if live != nil && !apply.IsOurs(live, drink.UID) {
		obs.conflict = &configMapConflict{controller: controllerOf(live)}
		return obs
	}
	if live != nil {
		inSync, err := apply.InSync(desired, live)
		if err != nil {
			obs.err = err
			return obs
		}
		if inSync {
			obs.owned = true
			return obs
		}
	}

	cfg, err := apply.Into[corev1ac.ConfigMapApplyConfiguration](desired)
	if err != nil {
		obs.err = err
		return obs
	}
	if live != nil {
		// Only change the ConfigMap that was checked: a stale cached copy
		// (or a ConfigMap replaced meanwhile) makes the apply conflict.
		cfg.WithResourceVersion(live.ResourceVersion)
	}
	if err := r.Apply(ctx, cfg, client.FieldOwner(apply.FieldOwner), client.ForceOwnership); err != nil {
		if live != nil && apierrors.IsConflict(err) {
			obs.stale = true
			return obs
		}
		obs.err = fmt.Errorf("applying ConfigMap %s: %w", key, err)
		return obs
	}
	obs.owned = true

	log := ctrl.LoggerFrom(ctx)
	if live == nil {
		log.Info("Created ConfigMap", "configMap", key)
		r.Recorder.Eventf(drink, nil, corev1.EventTypeNormal, eventConfigMapCreated, actionCreate,
			"Created ConfigMap %s", key)
	} else {
		log.Info("Updated ConfigMap", "configMap", key)
		r.Recorder.Eventf(drink, nil, corev1.EventTypeNormal, eventConfigMapUpdated, actionUpdate,
			"Updated ConfigMap %s to match the Drink", key)
	}
	return obs
}

// liveConfigMap returns the ConfigMap at key, nil when it does not exist.
func (r *DrinkReconciler) liveConfigMap(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	found, err := apply.Get(ctx, r.Client, r.APIReader, key, cm)
	if !found {
		return nil, err
	}
	return cm, nil
}

// controllerOf returns "Kind/name" of obj's controller, empty when none.
func controllerOf(obj metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return ""
	}
	return ref.Kind + "/" + ref.Name
}
