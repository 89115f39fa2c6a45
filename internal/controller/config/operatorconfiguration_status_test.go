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

package config

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	controllers "sunstrider.cn/operator/internal/controller"
)

func TestComputeStatus(t *testing.T) {
	refused := []configv1alpha1.RefusedField{{Field: "spec.watchNamespaces", Message: "namespace nope does not exist"}}
	tests := []struct {
		name        string
		obs         observation
		wantReady   metav1.ConditionStatus
		wantReason  string
		wantMessage []string
		// wantProgress is the condition besides Ready, empty when none.
		wantProgress string
		// wantUnenforced: AccessChecks=False and status.effective says
		// Unenforced.
		wantUnenforced bool
	}{
		{name: "in effect", obs: observation{},
			wantReady: metav1.ConditionTrue, wantReason: configv1alpha1.ReasonApplied,
			wantMessage: []string{"The configuration is in effect"}},
		{name: "refused", obs: observation{refused: refused},
			wantReady: metav1.ConditionFalse, wantReason: configv1alpha1.ReasonRefused,
			wantMessage:  []string{"spec.watchNamespaces: namespace nope does not exist"},
			wantProgress: configv1alpha1.ConditionStalled},
		{name: "restart", obs: observation{restart: []string{"spec.controllers"}},
			wantReady: metav1.ConditionFalse, wantReason: configv1alpha1.ReasonRestartRequired,
			wantMessage:  []string{"spec.controllers take effect at start"},
			wantProgress: configv1alpha1.ConditionReconciling},
		{name: "refused wins over a restart, which the message tells", obs: observation{refused: refused,
			restart: []string{"spec.controllers"}},
			wantReady: metav1.ConditionFalse, wantReason: configv1alpha1.ReasonRefused,
			wantMessage:  []string{"spec.watchNamespaces", "restarts to apply spec.controllers"},
			wantProgress: configv1alpha1.ConditionStalled},
		{name: "no access check runs: Ready stays, but says so", obs: observation{unenforced: "no webhooks (--enable-webhooks=false)"},
			wantReady: metav1.ConditionTrue, wantReason: configv1alpha1.ReasonApplied,
			wantMessage: []string{"but for spec.childAccess: no access check runs (AccessChecks)"}, wantUnenforced: true},
		{name: "no access check runs, and a field refused", obs: observation{refused: refused, unenforced: "not registered"},
			wantReady: metav1.ConditionFalse, wantReason: configv1alpha1.ReasonRefused,
			wantMessage:  []string{"spec.watchNamespaces: namespace nope does not exist"},
			wantProgress: configv1alpha1.ConditionStalled, wantUnenforced: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tt.obs.inEffect = defaults
			cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
			st := computeStatus(cfg, &tt.obs)
			g.Expect(st.ObservedGeneration).To(Equal(int64(4)))
			wantEffective := defaults.Spec()
			access := meta.FindStatusCondition(st.Conditions, configv1alpha1.ConditionAccessChecks)
			g.Expect(access).NotTo(BeNil())
			if tt.wantUnenforced {
				wantEffective.ChildAccess = configv1alpha1.ChildAccessUnenforced
				g.Expect(access.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(access.Reason).To(Equal(configv1alpha1.ReasonUnenforced))
				g.Expect(access.Message).To(Equal("No access check runs: " + tt.obs.unenforced))
			} else {
				g.Expect(access.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(access.Reason).To(Equal(configv1alpha1.ReasonEnforced))
			}
			g.Expect(st.Effective).To(Equal(wantEffective))
			g.Expect(st.Refused).To(Equal(tt.obs.refused))
			ready := meta.FindStatusCondition(st.Conditions, configv1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(tt.wantReady))
			g.Expect(ready.Reason).To(Equal(tt.wantReason))
			g.Expect(ready.ObservedGeneration).To(Equal(int64(4)))
			for _, m := range tt.wantMessage {
				g.Expect(ready.Message).To(ContainSubstring(m))
			}
			want := []string{configv1alpha1.ConditionReady, configv1alpha1.ConditionAccessChecks}
			if tt.wantProgress != "" {
				want = append(want, tt.wantProgress)
				progress := meta.FindStatusCondition(st.Conditions, tt.wantProgress)
				g.Expect(progress.Reason).To(Equal(ready.Reason))
				g.Expect(progress.Message).To(Equal(ready.Message))
			}
			g.Expect(st.Conditions).To(ConsistOf(conditionTypes(want)...))
		})
	}
}

func conditionTypes(types []string) []any {
	out := make([]any, len(types))
	for i, t := range types {
		out[i] = HaveField("Type", t)
	}
	return out
}

// computeStatus returns a new status: the configuration is left as it
// was, and a condition whose status holds keeps its lastTransitionTime.
func TestComputeStatusLeavesTheConfigurationAndKeepsTransitionTimes(t *testing.T) {
	g := NewWithT(t)
	then := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	cfg.Status.Conditions = []metav1.Condition{{Type: configv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: configv1alpha1.ReasonRestartRequired, LastTransitionTime: then, ObservedGeneration: 1},
		{Type: controllers.ConditionReconciling, Status: metav1.ConditionTrue,
			Reason: configv1alpha1.ReasonRestartRequired, LastTransitionTime: then, ObservedGeneration: 1}}
	before := cfg.DeepCopy()

	st := computeStatus(cfg, &observation{inEffect: defaults, refused: []configv1alpha1.RefusedField{{Field: "f", Message: "m"}}})
	g.Expect(cfg).To(Equal(before))
	ready := meta.FindStatusCondition(st.Conditions, configv1alpha1.ConditionReady)
	g.Expect(ready.Reason).To(Equal(configv1alpha1.ReasonRefused))
	g.Expect(ready.LastTransitionTime).To(Equal(then), "Ready stayed False")
	g.Expect(meta.FindStatusCondition(st.Conditions, controllers.ConditionReconciling)).To(BeNil())
	g.Expect(meta.FindStatusCondition(st.Conditions, controllers.ConditionStalled).LastTransitionTime).NotTo(Equal(then))
}

// Every reason of Ready=False is classified.
func TestReadyReasonClasses(t *testing.T) {
	g := NewWithT(t)
	for _, reason := range []string{configv1alpha1.ReasonRefused, configv1alpha1.ReasonRestartRequired} {
		g.Expect(readyReasonClasses).To(HaveKey(reason))
	}
}

// The operator owns the OperatorConfiguration's conditions: one someone
// else added is not carried into the status it writes.
func TestComputeStatusDropsConditionsItDoesNotOwn(t *testing.T) {
	g := NewWithT(t)
	cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	cfg.Status.Conditions = []metav1.Condition{{Type: "AddedByHand", Status: metav1.ConditionTrue, Reason: "Hand"}}
	st := computeStatus(cfg, &observation{inEffect: defaults})
	g.Expect(meta.FindStatusCondition(st.Conditions, "AddedByHand")).To(BeNil())
	g.Expect(meta.IsStatusConditionTrue(st.Conditions, configv1alpha1.ConditionReady)).To(BeTrue())
}
