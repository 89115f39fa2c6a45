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

package apply

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSyncedChildrenHolds: what SyncedChildren answers without InSync once
// InSync found a child in sync. TestDriftedAgreesWithAPIServer judges its
// answers against the API server.
func TestSyncedChildrenHolds(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "apps.sunstrider.cn/v1", Kind: "Application", Name: "app", UID: "parent", Controller: new(true)}
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Namespace: "ns", Name: "app", UID: "child", Generation: 2, ResourceVersion: "10",
			Labels:          map[string]string{"app": "web", "empty": ""},
			Annotations:     map[string]string{HashAnnotation: "h1"},
			OwnerReferences: []metav1.OwnerReference{owner},
		}
	}
	deployment := func(change func(*appsv1.Deployment)) client.Object {
		d := &appsv1.Deployment{ObjectMeta: meta()}
		if change != nil {
			change(d)
		}
		return d
	}
	service := func(change func(*corev1.Service)) client.Object {
		s := &corev1.Service{ObjectMeta: meta()}
		if change != nil {
			change(s)
		}
		return s
	}
	cases := []struct {
		name string
		// desired and live: the check after InSync found desired and
		// remembered (its live) in sync.
		desired, remembered, live client.Object
		holds                     bool
	}{
		{name: "a Deployment as it was", desired: deployment(nil), remembered: deployment(nil), live: deployment(nil), holds: true},
		{name: "a Deployment whose status moved on", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.ResourceVersion = "11"; d.Status.Replicas = 1 }), holds: true},
		{name: "a Deployment whose spec changed", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.ResourceVersion = "11"; d.Generation = 3 }), holds: false},
		{name: "a new desired configuration", desired: deployment(func(d *appsv1.Deployment) { d.Annotations[HashAnnotation] = "h2" }),
			remembered: deployment(nil), live: deployment(nil), holds: false},
		{name: "a label removed", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { delete(d.Labels, "app") }), holds: false},
		{name: "a label set to another value", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.Labels["app"] = "db" }), holds: false},
		{name: "an empty label removed", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { delete(d.Labels, "empty") }), holds: false},
		{name: "a label and an annotation added", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.Labels["team"] = "a"; d.Annotations["note"] = "x" }), holds: true},
		{name: "the hash annotation changed", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.Annotations[HashAnnotation] = "h0" }), holds: false},
		{name: "the owner reference removed", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.OwnerReferences = nil }), holds: false},
		{name: "the owner reference no longer the controller", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.OwnerReferences[0].Controller = nil }), holds: false},
		{name: "another owner added", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) {
				d.OwnerReferences = append(d.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "y"})
			}), holds: true},
		{name: "another object of the name", desired: deployment(nil), remembered: deployment(nil),
			live: deployment(func(d *appsv1.Deployment) { d.UID = "other" }), holds: false},
		{name: "a Service as it was", desired: service(nil), remembered: service(nil), live: service(nil), holds: true},
		{name: "a Service written since, at the same generation", desired: service(nil), remembered: service(nil),
			live: service(func(s *corev1.Service) { s.ResourceVersion = "11" }), holds: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synced := &SyncedChildren{}
			if synced.holds(c.desired, c.live) {
				t.Fatal("holds before anything was remembered")
			}
			synced.remember(c.desired, c.remembered)
			if got := synced.holds(c.desired, c.live); got != c.holds {
				t.Fatalf("holds = %v, want %v", got, c.holds)
			}
			if got, want := SyncedAnswered(synced), map[bool]int64{true: 1, false: 0}[c.holds]; got != want {
				t.Fatalf("answered %d checks, want %d", got, want)
			}
		})
	}
	var none *SyncedChildren
	none.remember(deployment(nil), deployment(nil))
	if none.holds(deployment(nil), deployment(nil)) {
		t.Fatal("a nil SyncedChildren holds a child")
	}
}
