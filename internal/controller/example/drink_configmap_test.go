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

package example

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/apply"
)

func TestDesiredConfigMap(t *testing.T) {
	base := newDrink("ns", testDrink, "my-drink", "coffee")
	base.UID = "uid-1"
	tests := []struct {
		name     string
		drink    *examplev1.Drink
		wantData map[string]string
	}{
		{name: "sample", drink: base, wantData: map[string]string{configMapKeyName: "my-drink", configMapKeyDrink: "coffee"}},
		{
			name:     "other drink",
			drink:    newDrink("ns", testDrink, "my-drink", "tea"),
			wantData: map[string]string{configMapKeyName: "my-drink", configMapKeyDrink: "tea"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cm, err := desiredConfigMap(tt.drink)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cm.APIVersion).To(Equal("v1"))
			g.Expect(cm.Kind).To(Equal("ConfigMap"))
			g.Expect(cm.Name).To(Equal(testDrink))
			g.Expect(cm.Namespace).To(Equal("ns"))
			g.Expect(cm.Data).To(Equal(tt.wantData))
			g.Expect(cm.Labels).To(Equal(map[string]string{apply.ManagedByLabel: apply.ManagedByValue}))
			g.Expect(cm.Annotations).To(HaveKey(apply.HashAnnotation))
			g.Expect(cm.OwnerReferences).To(HaveLen(1))
			g.Expect(apply.IsControlledBy(cm, tt.drink.UID)).To(BeTrue())
			g.Expect(cm.OwnerReferences[0].BlockOwnerDeletion).To(HaveValue(BeTrue()))
		})
	}

	t.Run("hash follows the spec only", func(t *testing.T) {
		g := NewWithT(t)
		coffee, _ := desiredConfigMap(newDrink("ns", testDrink, "my-drink", "coffee"))
		again, _ := desiredConfigMap(newDrink("ns", testDrink, "my-drink", "coffee"))
		tea, _ := desiredConfigMap(newDrink("ns", testDrink, "my-drink", "tea"))
		g.Expect(again.Annotations).To(Equal(coffee.Annotations))
		g.Expect(tea.Annotations[apply.HashAnnotation]).NotTo(Equal(coffee.Annotations[apply.HashAnnotation]))
	})
}

func TestDesiredConfigMapInSync(t *testing.T) {
	drink := newDrink("ns", testDrink, "my-drink", "coffee")
	desired, err := desiredConfigMap(drink)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	live := func(edit func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := desired.DeepCopy()
		cm.ResourceVersion = "7"
		cm.UID = "cm-uid"
		edit(cm)
		return cm
	}
	tests := []struct {
		name string
		live *corev1.ConfigMap
		want bool
	}{
		{name: "as applied", live: live(func(*corev1.ConfigMap) {}), want: true},
		{name: "extra key added by hand", live: live(func(cm *corev1.ConfigMap) { cm.Data["extra"] = "x" }), want: true},
		{name: "value edited", live: live(func(cm *corev1.ConfigMap) { cm.Data[configMapKeyDrink] = "water" }), want: false},
		{name: "key removed", live: live(func(cm *corev1.ConfigMap) { delete(cm.Data, configMapKeyName) }), want: false},
		{name: "label removed", live: live(func(cm *corev1.ConfigMap) { cm.Labels = nil }), want: false},
		{name: "another owner added", live: live(func(cm *corev1.ConfigMap) {
			cm.OwnerReferences = append([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "s"}},
				cm.OwnerReferences...)
		}), want: true},
		{name: "blockOwnerDeletion cleared", live: live(func(cm *corev1.ConfigMap) {
			cm.OwnerReferences[0].BlockOwnerDeletion = new(false)
		}), want: false},
		{name: "owner reference removed", live: live(func(cm *corev1.ConfigMap) { cm.OwnerReferences = nil }), want: false},
		{name: "hash removed", live: live(func(cm *corev1.ConfigMap) { cm.Annotations = nil }), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := apply.InSync(desired, tt.live)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}
