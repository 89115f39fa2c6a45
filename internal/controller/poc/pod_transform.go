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

package poc

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// PodCacheTransform strips a Pod down to what the MyCustomResource controller
// reads before it enters the manager's cache: name, namespace, uid,
// resourceVersion (informers and clients rely on it), labels, owner
// references, deletionTimestamp and the type, status, reason and message of
// the Ready condition. Spec, annotations, managedFields, the phase, the other
// conditions, timestamps and container statuses are dropped, so watching
// every Pod of the cluster costs little memory.
//
// Register it in the manager's cache options:
//
//	cache.Options{ByObject: map[client.Object]cache.ByObject{
//		&corev1.Pod{}: {Transform: poc.PodCacheTransform},
//	}}
//
// Every reader of Pods through that cache then sees stripped Pods. Anything
// that is not a *corev1.Pod (such as a deletion tombstone) is returned
// unchanged. The function is idempotent.
func PodCacheTransform(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              pod.Name,
			Namespace:         pod.Namespace,
			UID:               pod.UID,
			ResourceVersion:   pod.ResourceVersion,
			Labels:            pod.Labels,
			OwnerReferences:   pod.OwnerReferences,
			DeletionTimestamp: pod.DeletionTimestamp,
		},
		Status: corev1.PodStatus{Conditions: readyOnly(pod.Status.Conditions)},
	}, nil
}

// readyOnly returns the Ready condition of conditions, without timestamps,
// as the only element of a new slice; nil when there is none.
func readyOnly(conditions []corev1.PodCondition) []corev1.PodCondition {
	for _, c := range conditions {
		if c.Type == corev1.PodReady {
			return []corev1.PodCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}}
		}
	}
	return nil
}

// PodCacheTransform must stay usable as a cache transform.
var _ toolscache.TransformFunc = PodCacheTransform
