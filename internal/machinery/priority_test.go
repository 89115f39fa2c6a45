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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestEnqueueOwnerWhenReadyPutsTheOwnerAheadOfTheQueue(t *testing.T) {
	owner := schema.GroupKind{Group: "apps.sunstrider.cn", Kind: "Application"}
	child := func(ready bool, controller string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child"}}
		if controller != "" {
			cm.OwnerReferences = []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Secret", Name: "not-the-controller", UID: "1"},
				{APIVersion: controller, Kind: "Application", Name: "parent", UID: "2", Controller: new(true)},
			}
		}
		if ready {
			cm.Data = map[string]string{"ready": "yes"}
		}
		return cm
	}
	isReady := func(cm *corev1.ConfigMap) bool { return cm.Data["ready"] == "yes" }
	parent := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "parent"}}

	for _, c := range []struct {
		name     string
		old, new client.Object
		queued   bool
	}{
		{"became ready", child(false, "apps.sunstrider.cn/v1"), child(true, "apps.sunstrider.cn/v1"), true},
		{"was ready already", child(true, "apps.sunstrider.cn/v1"), child(true, "apps.sunstrider.cn/v1"), false},
		{"became unready", child(true, "apps.sunstrider.cn/v1"), child(false, "apps.sunstrider.cn/v1"), false},
		{"controlled by another kind's group", child(false, "example.com/v1"), child(true, "example.com/v1"), false},
		{"no controller", child(false, ""), child(true, ""), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("test")
			defer q.ShutDown()
			other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "queued-first"}}
			q.Add(other)
			EnqueueOwnerWhenReady(owner, isReady).Update(context.Background(),
				event.UpdateEvent{ObjectOld: c.old, ObjectNew: c.new}, q)
			if !c.queued {
				if q.Len() != 1 {
					t.Fatalf("queued %d items, want only the one queued before", q.Len())
				}
				return
			}
			got, priority, _ := q.GetWithPriority()
			if got != parent || priority != ReadyPriority {
				t.Fatalf("first out: %v at priority %d, want %v at %d (ahead of the item queued before it)",
					got, priority, parent, ReadyPriority)
			}
		})
	}
}
