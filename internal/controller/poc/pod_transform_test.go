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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

func fullPod() *corev1.Pod {
	now := metav1.NewTime(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "funny-joe", Namespace: "default", UID: "uid-1", ResourceVersion: "42",
			Labels:            map[string]string{"app": "funny"},
			Annotations:       map[string]string{"big": "annotation"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "uid-rs"}},
			DeletionTimestamp: &now,
			Finalizers:        []string{"x"},
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "ubuntu"}}, NodeName: "node"},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "c not ready", LastTransitionTime: now},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true}},
			PodIP:             "10.0.0.1",
		},
	}
}

func TestPodCacheTransform(t *testing.T) {
	full := fullPod()
	stripped := &corev1.Pod{
		TypeMeta: full.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: "funny-joe", Namespace: "default", UID: "uid-1", ResourceVersion: "42",
			Labels:            full.Labels,
			OwnerReferences:   full.OwnerReferences,
			DeletionTimestamp: full.DeletionTimestamp,
		},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "c not ready"},
		}},
	}
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "default/funny-joe", Obj: fullPod()}
	configMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Annotations: map[string]string{"a": "b"}}}

	tests := []struct {
		name string
		in   any
		want any
	}{
		{name: "full pod is stripped", in: fullPod(), want: stripped},
		{name: "stripped pod is unchanged (idempotent)", in: stripped.DeepCopy(), want: stripped},
		{name: "empty pod", in: &corev1.Pod{}, want: &corev1.Pod{}},
		{name: "tombstone passes through", in: tombstone, want: tombstone},
		{name: "other kinds pass through", in: configMap, want: configMap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := PodCacheTransform(tt.in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestPodUpdateMatters(t *testing.T) {
	now := metav1.Now()
	withReady := func(status corev1.ConditionStatus, reason string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "1"}}
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: status, Reason: reason},
		}
		return p
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "1"}}
	relabelled := plain.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	relabelled.ResourceVersion = "2"
	deleting := plain.DeepCopy()
	deleting.DeletionTimestamp = &now
	recreated := plain.DeepCopy()
	recreated.UID = "2"
	otherCondition := withReady(corev1.ConditionTrue, "")
	otherCondition.Status.Conditions[0].Status = corev1.ConditionFalse

	tests := []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{name: "labels only", old: plain, new: relabelled, want: false},
		{name: "deletion starts", old: plain, new: deleting, want: true},
		{name: "new uid", old: plain, new: recreated, want: true},
		{name: "ready appears", old: plain, new: withReady(corev1.ConditionFalse, ""), want: true},
		{name: "ready disappears", old: withReady(corev1.ConditionTrue, ""), new: plain, want: true},
		{name: "ready flips", old: withReady(corev1.ConditionFalse, ""), new: withReady(corev1.ConditionTrue, ""), want: true},
		{name: "ready reason changes", old: withReady(corev1.ConditionFalse, "A"), new: withReady(corev1.ConditionFalse, "B"), want: true},
		{name: "ready unchanged", old: withReady(corev1.ConditionTrue, ""), new: withReady(corev1.ConditionTrue, ""), want: false},
		{name: "another condition changes", old: withReady(corev1.ConditionTrue, ""), new: otherCondition, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(podUpdateMatters(tt.old, tt.new)).To(Equal(tt.want))
		})
	}
}
