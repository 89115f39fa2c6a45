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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// PodMetadataTransform returns the cache transform that strips a Pod's
// metadata down to what the controllers read before it enters the
// manager's cache. The controllers watch Pods as metadata only
// (WatchesMetadata: the API server sends metav1.PartialObjectMetadata, no
// spec and no status) and read a Pod's readiness, labels or owners from
// the API server when they need them, so that caching every Pod of the
// cluster (the most numerous objects of most clusters) costs a few hundred
// bytes each. Kept: name, namespace, uid, resourceVersion (informers and
// clients rely on it), deletionTimestamp, and the labels named in
// keepLabels (those the watches map Pods by); everything else (other
// labels, annotations, owner references, finalizers, timestamps,
// managedFields) is dropped.
//
// Register it in the manager's cache options for Pods:
//
//	cache.Options{ByObject: map[client.Object]cache.ByObject{
//		&corev1.Pod{}: {Transform: machinery.PodMetadataTransform(webappv1.LabelGuestbook)},
//	}}
//
// Anything else (such as a deletion tombstone) is returned unchanged. The
// transform is idempotent.
func PodMetadataTransform(keepLabels ...string) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return obj, nil
		}
		var labels map[string]string
		for _, key := range keepLabels {
			if value, found := m.Labels[key]; found {
				if labels == nil {
					labels = make(map[string]string, 1)
				}
				labels[key] = value
			}
		}
		return &metav1.PartialObjectMetadata{
			TypeMeta: m.TypeMeta,
			ObjectMeta: metav1.ObjectMeta{
				Name:              m.Name,
				Namespace:         m.Namespace,
				UID:               m.UID,
				ResourceVersion:   m.ResourceVersion,
				Labels:            labels,
				DeletionTimestamp: m.DeletionTimestamp,
			},
		}, nil
	}
}

// PodReadyCondition returns pod's own Ready condition, nil when absent.
func PodReadyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// PodIsReady tells whether the Pod reports Ready=True.
func PodIsReady(pod *corev1.Pod) bool {
	c := PodReadyCondition(pod)
	return c != nil && c.Status == corev1.ConditionTrue
}
