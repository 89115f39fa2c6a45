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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"sunstrider.cn/operator/internal/apply"
)

func TestIsControlledByOneOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		ref  metav1.OwnerReference
		want bool
	}{
		{"a Guestbook", metav1.OwnerReference{APIVersion: "webapp.my.domain/v1", Kind: "Guestbook"}, true},
		{"a Drink of another version", metav1.OwnerReference{APIVersion: "example.com/v1beta1", Kind: "Drink"}, true},
		{"an operator kind that makes no such child", metav1.OwnerReference{APIVersion: "apps.sunstrider.cn/v1", Kind: "Application"}, false},
		{"another kind of an operator group", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget"}, false},
		{"an operator kind's name in another group", metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Guestbook"}, false},
		{"a ReplicaSet", metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet"}, false},
		{"an unparsable version", metav1.OwnerReference{APIVersion: "a/b/c", Kind: "Guestbook"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ref := tc.ref
			ref.Name, ref.UID = "owner", "owner-uid"
			obj := &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{ref}}
			g.Expect(IsControlledByOneOf(obj, configMapOwners...)).To(BeFalse(), "an owner, not the controller")
			obj.OwnerReferences[0].Controller = new(true)
			g.Expect(IsControlledByOneOf(obj, configMapOwners...)).To(Equal(tc.want))
		})
	}
	g := NewWithT(t)
	g.Expect(IsControlledByOneOf(&metav1.ObjectMeta{
		Labels: map[string]string{apply.ManagedByLabel: apply.ManagedByValue},
	}, configMapOwners...)).To(BeFalse(), "the label alone")
}

func labelledDeployment(owners ...metav1.OwnerReference) *appsv1.Deployment {
	now := metav1.NewTime(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "42", Generation: 3,
			CreationTimestamp: now,
			DeletionTimestamp: &now,
			Labels:            map[string]string{apply.ManagedByLabel: apply.ManagedByValue},
			Annotations:       map[string]string{"big": "xxxxxxxx"},
			OwnerReferences:   owners,
			Finalizers:        []string{"x"},
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: appsv1.DeploymentSpec{Replicas: new(int32(2)), Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
		}},
		Status: appsv1.DeploymentStatus{Replicas: 2},
	}
}

func TestForeignMetadataTransform(t *testing.T) {
	g := NewWithT(t)
	transform := ForeignMetadataTransform(applicationKind)

	// Labelled as the operator's by someone else: the metadata the
	// controllers tell whose it is by, no more.
	replicaSet := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: new(true)}
	foreign := labelledDeployment(replicaSet)
	want := &appsv1.Deployment{
		TypeMeta: foreign.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "42", Generation: 3,
			CreationTimestamp: foreign.CreationTimestamp,
			DeletionTimestamp: foreign.DeletionTimestamp,
			Labels:            foreign.Labels,
			OwnerReferences:   foreign.OwnerReferences,
		},
	}
	got, err := transform(foreign.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want))
	g.Expect(apply.IsOurs(got.(*appsv1.Deployment), "app-uid")).To(BeFalse(), "still someone else's: a conflict")
	again, err := transform(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(want), "idempotent")

	// One of the operator's children that lost its controller reference:
	// stripped, but with the hash that makes it the operator's (apply.IsOurs).
	orphan := labelledDeployment()
	orphan.Annotations[apply.HashAnnotation] = "h"
	got, err = transform(orphan)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.(*appsv1.Deployment).Annotations).To(Equal(map[string]string{apply.HashAnnotation: "h"}))
	g.Expect(got.(*appsv1.Deployment).Spec).To(Equal(appsv1.DeploymentSpec{}))
	g.Expect(apply.IsOurs(got.(*appsv1.Deployment), "app-uid")).To(BeTrue())

	// The operator's own: whole.
	app := metav1.OwnerReference{APIVersion: "apps.sunstrider.cn/v1", Kind: "Application", Name: "web", UID: "app-uid", Controller: new(true)}
	own := labelledDeployment(app)
	got, err = transform(own.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(own))
	// Controlled by an operator kind that makes no Deployment: stripped.
	guestbook := metav1.OwnerReference{APIVersion: "webapp.my.domain/v1", Kind: "Guestbook", Name: "web", UID: "gb-uid", Controller: new(true)}
	got, err = transform(labelledDeployment(guestbook))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.(*appsv1.Deployment).Spec).To(Equal(appsv1.DeploymentSpec{}))

	// Metadata only: stripped alike.
	meta := &metav1.PartialObjectMetadata{TypeMeta: foreign.TypeMeta, ObjectMeta: foreign.ObjectMeta}
	got, err = transform(meta)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(&metav1.PartialObjectMetadata{TypeMeta: want.TypeMeta, ObjectMeta: want.ObjectMeta}))

	// Not an object: unchanged.
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "default/web", Obj: labelledDeployment()}
	got, err = transform(tombstone)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(tombstone))
}
