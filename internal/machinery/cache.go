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
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
)

// CacheOptions is the manager's cache configuration, for the operator and
// for every envtest suite alike:
//   - Deployments, Services, StatefulSets, PodDisruptionBudgets,
//     HorizontalPodAutoscalers and ControllerRevisions are cached only
//     when they carry the operator's label (apply.ManagedByLabel): foreign
//     objects of those kinds (the most numerous in most clusters) are read
//     from the API server when a name is in the way, and re-checked while
//     they are. Not HTTPRoutes: a cache's per-kind options need the kind
//     served when the cache starts, and the Gateway API may come later;
//     they are cached whole, once an Application has a route (its lazy
//     watch);
//   - of those labelled objects, only the ones controlled by a kind that
//     makes them (an Application, a Guestbook) are cached whole: anyone
//     may set the label, so the others are cached as their metadata
//     (ForeignMetadataTransform);
//   - Pods are cached as stripped metadata (PodMetadataTransform), with
//     only the labels podLabels names (those the controllers map Pod
//     events by);
//   - Nodes as their name and Ready condition (NodeReadyTransform);
//   - ConfigMaps are cached whole only when a Guestbook or a Drink
//     controls them: the others as their metadata and their data's checksum
//     (ConfigMapTransform);
//   - managedFields are dropped, but for the entries of other managers on
//     the operator's own children that the drift check needs
//     (apply.ManagedFieldsTransform);
//   - equal strings and label maps of all cached objects share one copy
//     (Interner).
func CacheOptions(podLabels ...string) cache.Options {
	managed := labels.SelectorFromSet(labels.Set{apply.ManagedByLabel: apply.ManagedByValue})
	interner := NewInterner()
	// The kinds of children, each cached whole when controlled by the
	// kinds that make it.
	children := func(owners ...schema.GroupKind) cache.ByObject {
		return cache.ByObject{
			Label:     managed,
			Transform: interner.Transform(chain(ForeignMetadataTransform(owners...), apply.ManagedFieldsTransform())),
		}
	}
	return cache.Options{
		DefaultTransform: interner.Transform(apply.ManagedFieldsTransform()),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:  {Transform: interner.Transform(PodMetadataTransform(podLabels...))},
			&corev1.Node{}: {Transform: interner.Transform(NodeReadyTransform())},
			&corev1.ConfigMap{}: {Transform: interner.Transform(
				chain(ConfigMapTransform(), apply.ManagedFieldsTransform()))},
			&appsv1.Deployment{}:                     children(applicationKind),
			&corev1.Service{}:                        children(applicationKind, guestbookKind),
			&appsv1.StatefulSet{}:                    children(guestbookKind),
			&policyv1.PodDisruptionBudget{}:          children(applicationKind),
			&autoscalingv2.HorizontalPodAutoscaler{}: children(applicationKind),
			&appsv1.ControllerRevision{}:             children(applicationKind),
		},
	}
}

// chain returns the transform that runs first, then second on its result.
func chain(first, second toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := first(obj)
		if err != nil {
			return nil, err
		}
		return second(obj)
	}
}
