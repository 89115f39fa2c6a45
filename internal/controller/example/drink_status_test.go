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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

// kstatusOf is what Flux, kpt and Config Sync compute from obj.
func kstatusOf(g Gomega, obj runtime.Object) kstatus.Status {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	g.Expect(err).NotTo(HaveOccurred())
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: u})
	g.Expect(err).NotTo(HaveOccurred())
	return res.Status
}

func TestComputeDrinkStatus(t *testing.T) {
	configMaps := schema.GroupResource{Resource: "configmaps"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, testDrink,
		field.ErrorList{field.TooLong(field.NewPath("data"), "", 1<<20)})
	quota := apierrors.NewForbidden(configMaps, testDrink, errors.New("exceeded quota: cm-quota"))
	terminating := apierrors.NewForbidden(configMaps, testDrink, errors.New("namespace ns is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	tests := []struct {
		name          string
		obs           configMapObservation
		wantStatus    metav1.ConditionStatus
		wantReason    string
		wantMessage   []string
		wantConfigMap string
		wantKStatus   kstatus.Status
	}{
		{
			name:          "synced",
			obs:           configMapObservation{name: testDrink, owned: true},
			wantStatus:    metav1.ConditionTrue,
			wantReason:    examplev1.ReasonSynced,
			wantMessage:   []string{"ns/order"},
			wantConfigMap: testDrink,
			wantKStatus:   kstatus.CurrentStatus,
		},
		{
			name:        "foreign ConfigMap without controller",
			obs:         configMapObservation{name: testDrink, conflict: &configMapConflict{}},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonResourceConflict,
			wantMessage: []string{"ConfigMap ns/order", "no controller"},
			wantKStatus: kstatus.FailedStatus,
		},
		{
			name:        "ConfigMap controlled by something else",
			obs:         configMapObservation{name: testDrink, conflict: &configMapConflict{controller: "Drink/order"}},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonResourceConflict,
			wantMessage: []string{"ConfigMap ns/order", "controlled by Drink/order"},
			wantKStatus: kstatus.FailedStatus,
		},
		{
			name:        "apply failed",
			obs:         configMapObservation{name: testDrink, refused: apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "order", errors.New("boom"))},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonApplyFailed,
			wantMessage: []string{"The API server refused the ConfigMap", "boom"},
			wantKStatus: kstatus.InProgressStatus,
		},
		{
			name:        "ConfigMap invalid",
			obs:         configMapObservation{name: testDrink, refused: fmt.Errorf("applying ConfigMap ns/order: %w", invalid)},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonApplyRejected,
			wantMessage: []string{"The API server refused the ConfigMap", "data"},
			wantKStatus: kstatus.FailedStatus,
		},
		{
			name:        "ConfigMap forbidden by a quota",
			obs:         configMapObservation{name: testDrink, refused: fmt.Errorf("applying ConfigMap ns/order: %w", quota)},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonApplyRejected,
			wantMessage: []string{"exceeded quota"},
			wantKStatus: kstatus.FailedStatus,
		},
		{
			name:        "namespace terminating",
			obs:         configMapObservation{name: testDrink, refused: fmt.Errorf("applying ConfigMap ns/order: %w", terminating)},
			wantStatus:  metav1.ConditionFalse,
			wantReason:  examplev1.ReasonApplyFailed,
			wantMessage: []string{"being terminated"},
			wantKStatus: kstatus.InProgressStatus,
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
			drink.SetGroupVersionKind(examplev1.GroupVersion.WithKind("Drink"))
			g.Expect(kstatusOf(g, drink)).To(Equal(tt.wantKStatus))
			progress := map[kstatus.Status]string{
				kstatus.InProgressStatus: examplev1.ConditionReconciling,
				kstatus.FailedStatus:     examplev1.ConditionStalled,
			}[tt.wantKStatus]
			if progress == "" {
				g.Expect(drink.Status.Conditions).To(HaveLen(2))
			} else {
				g.Expect(drink.Status.Conditions).To(HaveLen(3))
				c := meta.FindStatusCondition(drink.Status.Conditions, progress)
				g.Expect(c).NotTo(BeNil(), progress)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), progress)
				g.Expect(c.Reason).To(Equal(tt.wantReason), progress)
				g.Expect(readyReasonClasses).To(HaveKey(tt.wantReason), "every reason of Ready=False is classified")
			}
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
