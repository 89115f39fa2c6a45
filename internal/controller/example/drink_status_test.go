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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

func TestComputeDrinkStatus(t *testing.T) {
	configMaps := schema.GroupResource{Resource: "configmaps"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, testDrink,
		field.ErrorList{field.TooLong(field.NewPath("data"), "", 1<<20)})
	quota := apierrors.NewForbidden(configMaps, testDrink, errors.New("exceeded quota: cm-quota"))
	running := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: testDrink}}
	refused := func(err error) *controllers.Children {
		return &controllers.Children{Kind: drinkKind, Refusal: &controllers.Refusal{Kind: "ConfigMap", Err: err}}
	}
	conflict := func(name string) *controllers.Children {
		return &controllers.Children{Kind: drinkKind, Conflicts: []string{name}}
	}
	tests := []struct {
		name          string
		obs           observation
		wantStatus    metav1.ConditionStatus
		wantReason    string
		wantMessage   []string
		wantConfigMap string
		wantKStatus   kstatus.Status
	}{
		{
			name:          "synced",
			obs:           observation{configMap: running, children: &controllers.Children{Kind: drinkKind}},
			wantStatus:    metav1.ConditionTrue,
			wantReason:    examplev1.ReasonSynced,
			wantMessage:   []string{"ConfigMap ns/order holds the drink"},
			wantConfigMap: testDrink,
			wantKStatus:   kstatus.CurrentStatus,
		},
		{
			name:        "foreign ConfigMap without controller",
			obs:         observation{children: conflict("ConfigMap ns/order (it has no controller)")},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonResourceConflict,
			wantMessage: []string{"ConfigMap ns/order", "no controller", "not controlled by this Drink"},
			wantKStatus: kstatus.FailedStatus,
		},
		{
			name:        "ConfigMap controlled by something else",
			obs:         observation{children: conflict("ConfigMap ns/order (it is controlled by Drink/order)")},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonResourceConflict,
			wantMessage: []string{"ConfigMap ns/order", "controlled by Drink/order"},
			wantKStatus: kstatus.FailedStatus,
		},
		{
			name:        "new ConfigMap refused as invalid",
			obs:         observation{children: refused(fmt.Errorf("applying ConfigMap ns/order: %w", invalid))},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonApplyFailed,
			wantMessage: []string{"The API server refused the ConfigMap", "data"},
			wantKStatus: kstatus.FailedStatus,
		},
		{
			name:          "change refused by a quota, the running ConfigMap kept",
			obs:           observation{configMap: running, children: refused(fmt.Errorf("applying ConfigMap ns/order: %w", quota))},
			wantStatus:    metav1.ConditionFalse,
			wantReason:    examplev1.ReasonApplyFailed,
			wantMessage:   []string{"The API server refused the ConfigMap", "exceeded quota"},
			wantConfigMap: testDrink,
			wantKStatus:   kstatus.FailedStatus,
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
				}, {
					Type: "Retired", Status: metav1.ConditionTrue, Reason: "Stale",
					LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour)),
				}},
			}
			before := drink.DeepCopy()
			status := computeStatus(drink, &tt.obs)
			g.Expect(drink).To(Equal(before), "computeStatus changes nothing of the Drink")

			g.Expect(status.ObservedGeneration).To(Equal(int64(4)))
			g.Expect(status.ConfigMapName).To(Equal(tt.wantConfigMap))
			drink.Status = status
			drink.SetGroupVersionKind(examplev1.GroupVersion.WithKind(drinkKind))
			g.Expect(testutil.KStatus(g, drink)).To(Equal(tt.wantKStatus))
			progress := map[kstatus.Status]string{
				kstatus.InProgressStatus: examplev1.ConditionReconciling,
				kstatus.FailedStatus:     examplev1.ConditionStalled,
			}[tt.wantKStatus]
			if progress == "" {
				g.Expect(status.Conditions).To(HaveLen(2))
			} else {
				g.Expect(status.Conditions).To(HaveLen(3))
				c := meta.FindStatusCondition(status.Conditions, progress)
				g.Expect(c).NotTo(BeNil(), progress)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), progress)
				g.Expect(c.Reason).To(Equal(tt.wantReason), progress)
				g.Expect(readyReasonClasses).To(HaveKey(tt.wantReason), "every reason of Ready=False is classified")
			}
			for _, condType := range []string{examplev1.ConditionReady, examplev1.ConditionConfigMapSynced} {
				c := meta.FindStatusCondition(status.Conditions, condType)
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
	running := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: testDrink}}
	synced := &observation{configMap: running, children: &controllers.Children{Kind: drinkKind}}
	drink.Status = computeStatus(drink, synced)
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	for i := range drink.Status.Conditions {
		drink.Status.Conditions[i].LastTransitionTime = past
	}
	g.Expect(computeStatus(drink, synced)).To(Equal(drink.Status), "same observation, same status")

	// Refused: Ready and ConfigMapSynced change, so does their time.
	refused := &observation{configMap: running, children: &controllers.Children{Kind: drinkKind,
		Refusal: &controllers.Refusal{Kind: "ConfigMap", Err: apierrors.NewForbidden(
			schema.GroupResource{Resource: "configmaps"}, testDrink, errors.New("denied"))}}}
	status := computeStatus(drink, refused)
	for _, condType := range []string{examplev1.ConditionReady, examplev1.ConditionConfigMapSynced} {
		g.Expect(meta.FindStatusCondition(status.Conditions, condType).LastTransitionTime).NotTo(Equal(past), condType)
	}
}

// The Drink's section of docs/conditions.md lists every reason of Ready
// the code sets, with its condition.
func TestConditionsDocAgrees(t *testing.T) {
	testutil.ExpectConditionsDoc(t, drinkKind, readyReasonClasses)
}
