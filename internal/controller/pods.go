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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// PodMetadataTransform strips a Pod's metadata down to what the controllers
// read before it enters the manager's cache. The controllers watch Pods as
// metadata only (WatchesMetadata: the API server sends
// metav1.PartialObjectMetadata, no spec and no status) and read a Pod's
// readiness from the API server when they need it, so that caching every
// Pod of the cluster costs well under 1 KiB each. Kept: name, namespace,
// uid, resourceVersion (informers and clients rely on it), labels, owner
// references and deletionTimestamp; annotations, finalizers, timestamps
// and managedFields are dropped.
//
// Register it in the manager's cache options for Pods:
//
//	cache.Options{ByObject: map[client.Object]cache.ByObject{
//		&corev1.Pod{}: {Transform: controller.PodMetadataTransform},
//	}}
//
// Anything else (such as a deletion tombstone) is returned unchanged. The
// function is idempotent.
func PodMetadataTransform(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta: m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              m.Name,
			Namespace:         m.Namespace,
			UID:               m.UID,
			ResourceVersion:   m.ResourceVersion,
			Labels:            m.Labels,
			OwnerReferences:   m.OwnerReferences,
			DeletionTimestamp: m.DeletionTimestamp,
		},
	}, nil
}

// PodMetadataTransform must stay usable as a cache transform.
var _ toolscache.TransformFunc = PodMetadataTransform
