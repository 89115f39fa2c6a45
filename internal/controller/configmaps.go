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

package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"sunstrider.cn/operator/internal/apply"
)

// ConfigMapTransform returns the cache transform that keeps, of a
// ConfigMap the operator did not make (no apply.ManagedByLabel), only the
// metadata the controllers read: name, namespace, uid, resourceVersion
// (informers and clients rely on it), creation and deletion timestamps,
// labels and owner references. Its data, binary data and annotations (a
// `kubectl apply`'d ConfigMap holds a second copy of its data in the
// last-applied-configuration annotation) never enter the cache. The
// operator's own ConfigMaps (the Drinks' and the Guestbooks' defaults) are
// kept whole: the drift check compares their data.
//
// Why a transform rather than a label-selected cache (as for Deployments,
// Services and StatefulSets) plus a metadata-only watch of the others: the
// manager has one cache per kind, label selector included, shared by its
// typed and metadata-only informers, so a metadata-only watch of a
// label-selected kind would not see the foreign objects either. The Drink
// must see a foreign ConfigMap named like it come and go (a conflict), and
// the Guestbook the ConfigMap its spec names, whoever made it. The
// transform runs on each object as the informer receives it, before it is
// stored (the watch-list stream included), so a foreign ConfigMap's data is
// decoded and dropped, never held. What it costs: the API server still
// sends the data (network and decoding at start-up and on each change).
//
// The controllers read a stripped ConfigMap like a complete one: its
// owner references and labels say whose it is (apply.IsOurs). The data of
// a foreign ConfigMap, which only the Guestbook needs (it rolls its
// instances when the data changes), is read from the API server
// (IsStrippedConfigMap tells when). A ConfigMap the operator made that
// lacks its label (made by a version before the label, or the label
// removed by hand) is cached stripped: the drift check sees the label and
// data missing and applies them, after which the ConfigMap is cached whole
// and in sync.
//
// Anything else (a metadata-only ConfigMap, a deletion tombstone) is
// returned unchanged. The transform is idempotent.
func ConfigMapTransform() toolscache.TransformFunc {
	return func(obj any) (any, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || isOperatorConfigMap(cm) {
			return obj, nil
		}
		return &corev1.ConfigMap{
			TypeMeta: cm.TypeMeta,
			ObjectMeta: metav1.ObjectMeta{
				Name:              cm.Name,
				Namespace:         cm.Namespace,
				UID:               cm.UID,
				ResourceVersion:   cm.ResourceVersion,
				CreationTimestamp: cm.CreationTimestamp,
				DeletionTimestamp: cm.DeletionTimestamp,
				Labels:            cm.Labels,
				OwnerReferences:   cm.OwnerReferences,
			},
		}, nil
	}
}

// IsStrippedConfigMap reports whether cm may be a copy ConfigMapTransform
// stripped of its data: not the operator's, and without data. A ConfigMap
// read from the API server that is empty is one too, which costs one more
// read to whoever needs the data.
func IsStrippedConfigMap(cm *corev1.ConfigMap) bool {
	return !isOperatorConfigMap(cm) && cm.Data == nil && cm.BinaryData == nil
}

// isOperatorConfigMap reports whether cm carries the operator's label.
func isOperatorConfigMap(cm *corev1.ConfigMap) bool {
	return cm.Labels[apply.ManagedByLabel] == apply.ManagedByValue
}
