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

package machinery

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// ConfigMapTransform returns the cache transform that keeps, of a
// ConfigMap neither a Guestbook nor a Drink controls (IsControlledByOneOf:
// the kinds that make ConfigMaps), only what
// ForeignMetadataTransform keeps of any object, plus the checksum of its
// data. Its data, binary data and other annotations (a `kubectl apply`'d
// ConfigMap holds a second copy of its data in the
// last-applied-configuration annotation) never enter the cache. The
// operator's own ConfigMaps (the Drinks' and the Guestbooks' defaults) are
// kept whole: the drift check compares their data. Whole means controlled
// by one of those kinds, not labelled with apply.ManagedByLabel: anyone may
// label a ConfigMap, and about 250 labelled ConfigMaps of 1 MiB would take
// the operator past its memory limit (docs/security.md).
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
// owner references, labels and applied-config hash say whose it is
// (apply.IsOurs). Of a foreign ConfigMap's data the Guestbook needs only
// whether it changed (it rolls its instances then): the stripped copy
// keeps the data's checksum in CachedDataChecksumAnnotation, which
// ConfigMapChecksum reads, so no reconcile reads the data from the API
// server. A ConfigMap the operator made that lost its controller reference
// is cached stripped: the drift check finds it its own (label and hash)
// but its data missing, and applies it, controller reference included,
// after which the ConfigMap is cached whole and in sync.
//
// Anything else (a metadata-only ConfigMap, a deletion tombstone) is
// returned unchanged. The transform is idempotent.
func ConfigMapTransform() toolscache.TransformFunc {
	return func(obj any) (any, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || IsControlledByOneOf(cm, configMapOwners...) {
			return obj, nil
		}
		// Stripped already: the data is gone, its checksum is not.
		checksum := ConfigMapChecksum(cm)
		stripped := &corev1.ConfigMap{TypeMeta: cm.TypeMeta}
		copyForeignMetadata(stripped, cm)
		annotations := make(map[string]string, 2)
		maps.Copy(annotations, stripped.Annotations)
		annotations[CachedDataChecksumAnnotation] = checksum
		stripped.Annotations = annotations
		return stripped, nil
	}
}

// CachedDataChecksumAnnotation holds, on a ConfigMap ConfigMapTransform
// stripped (only ever in the cache, never written), DataChecksum of the
// data it dropped.
const CachedDataChecksumAnnotation = "sunstrider.cn/cached-data-checksum"

// ConfigMapChecksum returns DataChecksum of cm's data, whether cm is whole
// or a copy ConfigMapTransform stripped.
func ConfigMapChecksum(cm *corev1.ConfigMap) string {
	if isStripped(cm) {
		return cm.Annotations[CachedDataChecksumAnnotation]
	}
	return DataChecksum(cm.Data, cm.BinaryData)
}

// DataChecksum returns a checksum of a ConfigMap's data and binary data,
// independent of key order.
func DataChecksum(data map[string]string, binaryData map[string][]byte) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		h.Write([]byte("d\x00" + k + "\x00" + data[k] + "\x00"))
	}
	for _, k := range slices.Sorted(maps.Keys(binaryData)) {
		h.Write([]byte("b\x00" + k + "\x00"))
		h.Write(binaryData[k])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// isStripped reports whether cm is a copy ConfigMapTransform stripped.
func isStripped(cm *corev1.ConfigMap) bool {
	_, ok := cm.Annotations[CachedDataChecksumAnnotation]
	return ok && !IsControlledByOneOf(cm, configMapOwners...) && cm.Data == nil && cm.BinaryData == nil
}
