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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"sunstrider.cn/operator/internal/apply"
)

func configMap(labels map[string]string) *corev1.ConfigMap {
	now := metav1.NewTime(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "conf", Namespace: "default", UID: "uid-1", ResourceVersion: "42", Generation: 1,
			CreationTimestamp: now,
			DeletionTimestamp: &now,
			Labels:            labels,
			Annotations:       map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"k":"v"}}`},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Drink", Name: "d", UID: "uid-d"}},
			Finalizers:        []string{"x"},
		},
		Data:       map[string]string{"k": "v"},
		BinaryData: map[string][]byte{"b": []byte("bytes")},
	}
}

func TestConfigMapTransform(t *testing.T) {
	g := NewWithT(t)
	transform := ConfigMapTransform()

	foreign := configMap(map[string]string{"team": "blue"})
	stripped := &corev1.ConfigMap{
		TypeMeta: foreign.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: "conf", Namespace: "default", UID: "uid-1", ResourceVersion: "42", Generation: 1,
			CreationTimestamp: foreign.CreationTimestamp,
			DeletionTimestamp: foreign.DeletionTimestamp,
			Labels:            map[string]string{"team": "blue"},
			Annotations:       map[string]string{CachedDataChecksumAnnotation: DataChecksum(foreign.Data, foreign.BinaryData)},
			OwnerReferences:   foreign.OwnerReferences,
		},
	}
	got, err := transform(foreign)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(stripped))
	g.Expect(ConfigMapChecksum(got.(*corev1.ConfigMap))).To(Equal(DataChecksum(foreign.Data, foreign.BinaryData)),
		"the checksum of the data it dropped")
	// Idempotent.
	again, err := transform(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(stripped))

	// Labelled as the operator's, by anyone: stripped all the same, but
	// for the applied-config hash (apply.IsOurs reads it).
	labelled := configMap(map[string]string{apply.ManagedByLabel: apply.ManagedByValue})
	labelled.Annotations[apply.HashAnnotation] = "h"
	got, err = transform(labelled.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.(*corev1.ConfigMap).Data).To(BeNil())
	g.Expect(got.(*corev1.ConfigMap).BinaryData).To(BeNil())
	g.Expect(got.(*corev1.ConfigMap).Labels).To(Equal(labelled.Labels))
	g.Expect(got.(*corev1.ConfigMap).Annotations).To(Equal(map[string]string{
		apply.HashAnnotation:         "h",
		CachedDataChecksumAnnotation: DataChecksum(labelled.Data, labelled.BinaryData),
	}))
	again, err = transform(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(got), "idempotent")

	// The operator's own (an operator kind controls it): whole.
	own := configMap(nil)
	own.OwnerReferences[0].Controller = new(true)
	got, err = transform(own.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(own))
	g.Expect(ConfigMapChecksum(own)).To(Equal(DataChecksum(own.Data, own.BinaryData)))

	// Not a typed ConfigMap: unchanged.
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "default/conf", Obj: configMap(nil)}
	got, err = transform(tombstone)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(tombstone))
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "conf", Annotations: map[string]string{"a": "b"}}}
	got, err = transform(meta)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeIdenticalTo(meta))
}

func TestConfigMapChecksum(t *testing.T) {
	g := NewWithT(t)
	empty := DataChecksum(nil, nil)
	g.Expect(ConfigMapChecksum(&corev1.ConfigMap{})).To(Equal(empty), "an empty ConfigMap read from the API server")
	annotated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Annotations: map[string]string{CachedDataChecksumAnnotation: "abc"}}}
	g.Expect(ConfigMapChecksum(annotated)).To(Equal("abc"), "a stripped copy")
	annotated.Data = map[string]string{"k": "v"}
	g.Expect(ConfigMapChecksum(annotated)).To(Equal(DataChecksum(annotated.Data, nil)), "data present: it counts")
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "webapp.my.domain/v1", Kind: "Guestbook", Name: "gb", UID: "u", Controller: new(true)}},
		Annotations:     map[string]string{CachedDataChecksumAnnotation: "abc"}}}
	g.Expect(ConfigMapChecksum(own)).To(Equal(empty), "the operator's own are never stripped")
}
