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
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

func TestComputeDrinkStatus(t *testing.T) {
	tests := []struct {
		name          string
		obs           configMapObservation
		wantStatus    metav1.ConditionStatus
		wantReason    string
		wantMessage   []string
		wantConfigMap string
	}{
		{
			name:          "synced",
			obs:           configMapObservation{name: testDrink, owned: true},
			wantStatus:    metav1.ConditionTrue,
			wantReason:    examplev1.ReasonSynced,
			wantMessage:   []string{"ns/order"},
			wantConfigMap: testDrink,
		},
		{
			name:        "foreign ConfigMap without controller",
			obs:         configMapObservation{name: testDrink, conflict: &configMapConflict{}},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonResourceConflict,
			wantMessage: []string{"ConfigMap ns/order", "no controller"},
		},
		{
			name:        "ConfigMap controlled by something else",
			obs:         configMapObservation{name: testDrink, conflict: &configMapConflict{controller: "Drink/order"}},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonResourceConflict,
			wantMessage: []string{"ConfigMap ns/order", "controlled by Drink/order"},
		},
		{
			name:        "apply failed",
			obs:         configMapObservation{name: testDrink, err: errors.New("boom")},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonApplyFailed,
			wantMessage: []string{"boom"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			// A stale previous status must not leak into the result.
			drink := newDrink("ns", testDrink, "my-drink", "coffee")
			drink.Generation = 4
			drink.Status = examplev1.DrinkStatus{
				ObservedGeneration: 2,
				ConfigMapName:      "stale",
				Conditions: []metav1.Condition{{
					Type: examplev1.ConditionReady, Status: metav1.ConditionUnknown, Reason: "Stale",
					LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour)),
				}},
			}
			computeStatus(drink, tt.obs)

			g.Expect(drink.Status.ObservedGeneration).To(Equal(int64(4)))
			g.Expect(drink.Status.ConfigMapName).To(Equal(tt.wantConfigMap))
			g.Expect(drink.Status.Conditions).To(HaveLen(2))
			for _, condType := range []string{examplev1.ConditionReady, examplev1.ConditionConfigMapSynced} {
				c := meta.FindStatusCondition(drink.Status.Conditions, condType)
				g.Expect(c).NotTo(BeNil(), condType)
				g.Expect(c.Status).To(Equal(tt.wantStatus), condType)
				g.Expect(c.Reason).To(Equal(tt.wantReason), condType)
				g.Expect(c.ObservedGeneration).To(Equal(int64(4)), condType)
				g.Expect(c.LastTransitionTime.IsZero()).To(BeFalse(), condType)
				for _, part := range tt.wantMessage {
					g.Expect(c.Message).To(ContainSubstring(part), condType)
				}
			}
		})
	}
}

func TestComputeDrinkStatusKeepsTransitionTime(t *testing.T) {
	g := NewWithT(t)
	drink := newDrink("ns", testDrink, "my-drink", "coffee")
	obs := configMapObservation{name: testDrink, owned: true}
	computeStatus(drink, obs)
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	for i := range drink.Status.Conditions {
		drink.Status.Conditions[i].LastTransitionTime = past
	}
	before := drink.DeepCopy()
	computeStatus(drink, obs)
	g.Expect(drink.Status).To(Equal(before.Status), "same observation, same status")
}
