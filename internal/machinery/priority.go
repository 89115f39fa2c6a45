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
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ReadyPriority is the work-queue priority of a parent whose child just
// became ready (controller-runtime's priority queue: events are queued at
// 0, the initial list and resyncs at handler.LowPriority; higher goes
// first). Its reconcile writes the status that makes the parent Ready and
// nothing else. In first-come order it waited behind every parent created
// before it: under a burst, about half of the create→Ready time was spent
// between the Deployment becoming available and the Application becoming
// Ready (docs/performance.md, "Latency under a burst", has the figures).
// Work in progress finishes before new work starts; the new work is not
// starved, since a parent's child becomes ready once per change.
const ReadyPriority = 10

// EnqueueOwnerWhenReady queues the parent of kind owner that controls a
// child at ReadyPriority when an update makes the child ready (ready of
// the old copy false, of the new one true). Every other event is left to
// the controller's Owns, which queues it at the default priority; the
// priority queue keeps the higher of two priorities of one queued item.
//
// Hand-written because controller-runtime's handlers set only the low
// priority of unchanged objects; its priority queue takes any other.
func EnqueueOwnerWhenReady[T client.Object](owner schema.GroupKind, ready func(T) bool) handler.EventHandler {
	isReady := func(o client.Object) bool {
		child, ok := o.(T)
		return ok && ready(child)
	}
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			// The new copy first: most updates leave a child not ready.
			if !IsControlledByKind(e.ObjectNew, owner) || !isReady(e.ObjectNew) || isReady(e.ObjectOld) {
				return
			}
			// IsControlledByKind found the controller reference.
			ref := metav1.GetControllerOfNoCopy(e.ObjectNew)
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ObjectNew.GetNamespace(), Name: ref.Name}}
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				pq.AddWithOpts(priorityqueue.AddOpts{Priority: new(ReadyPriority)}, req)
				return
			}
			q.Add(req)
		},
	}
}
