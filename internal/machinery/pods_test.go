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
)

func podMetadata() *metav1.PartialObjectMetadata {
	now := metav1.NewTime(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "funny-joe", Namespace: "default", UID: "uid-1", ResourceVersion: "42", Generation: 1,
			CreationTimestamp: now,
			Labels:            map[string]string{"app": "funny"},
			Annotations:       map[string]string{"big": "annotation"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "uid-rs"}},
			DeletionTimestamp: &now,
			Finalizers:        []string{"x"},
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
	}
}

func TestPodMetadataTransform(t *testing.T) {
	full := podMetadata()
	full.Labels["webapp.my.domain/guestbook"] = "gb"
	stripped := &metav1.PartialObjectMetadata{
		TypeMeta: full.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: "funny-joe", Namespace: "default", UID: "uid-1", ResourceVersion: "42",
			Labels:            map[string]string{"webapp.my.domain/guestbook": "gb"},
			DeletionTimestamp: full.DeletionTimestamp,
		},
	}
	noLabels := stripped.DeepCopy()
	noLabels.Labels = nil
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "default/funny-joe", Obj: podMetadata()}
	typed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{"a": "b"}}}

	tests := []struct {
		name string
		keep []string
		in   any
		want any
	}{
		{name: "full metadata is stripped to the kept label", keep: []string{"webapp.my.domain/guestbook"},
			in: full.DeepCopy(), want: stripped},
		{name: "stripped metadata is unchanged (idempotent)", keep: []string{"webapp.my.domain/guestbook"},
			in: stripped.DeepCopy(), want: stripped},
		{name: "a Pod without the kept label keeps no label map", keep: []string{"webapp.my.domain/guestbook"},
			in: podMetadata(), want: noLabels},
		{name: "no label kept", in: full.DeepCopy(), want: noLabels},
		{name: "empty metadata", in: &metav1.PartialObjectMetadata{}, want: &metav1.PartialObjectMetadata{}},
		{name: "tombstone passes through", in: tombstone, want: tombstone},
		{name: "typed objects pass through", in: typed, want: typed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := PodMetadataTransform(tt.keep...)(tt.in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}
