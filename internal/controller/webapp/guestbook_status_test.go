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

package webapp

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

func readyInstances(ready ...bool) []instance {
	out := make([]instance, len(ready))
	for i, r := range ready {
		out[i] = instance{Name: "gb-" + string(rune('0'+i)), Ordinal: i, Ready: r}
	}
	return out
}

var conditionTests = []struct {
	name          string
	obs           observation
	wantReady     metav1.ConditionStatus
	wantReadyWhy  string
	wantAvailable metav1.ConditionStatus
	wantAvailWhy  string
}{
	{
		name:         "namespace missing",
		obs:          observation{namespace: "ns", namespaceMissing: true, size: 3},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonNamespaceNotFound, wantAvailable: metav1.ConditionFalse, wantAvailWhy: webappv1.ReasonNamespaceNotFound,
	},
	{
		name:         "conflict",
		obs:          observation{namespace: "ns", conflict: "StatefulSet ns/gb exists", size: 3},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonResourceConflict, wantAvailable: metav1.ConditionFalse, wantAvailWhy: webappv1.ReasonResourceConflict,
	},
	{
		name:         "no pods yet",
		obs:          observation{namespace: "ns", size: 3},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonInstancesNotReady, wantAvailable: metav1.ConditionFalse, wantAvailWhy: webappv1.ReasonNoReadyInstance,
	},
	{
		name:         "some ready, one active",
		obs:          observation{namespace: "ns", size: 3, instances: readyInstances(true, false, true), active: "gb-0", standby: []string{"gb-1", "gb-2"}},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonInstancesNotReady, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
	},
	{
		name:         "all ready but more pods than size (scaling down)",
		obs:          observation{namespace: "ns", size: 2, instances: readyInstances(true, true, true), active: "gb-0", standby: []string{"gb-1", "gb-2"}},
		wantReady:    metav1.ConditionFalse,
		wantReadyWhy: webappv1.ReasonInstancesNotReady, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
	},
	{
		name:         "all ready",
		obs:          observation{namespace: "ns", size: 3, instances: readyInstances(true, true, true), active: "gb-1", standby: []string{"gb-0", "gb-2"}},
		wantReady:    metav1.ConditionTrue,
		wantReadyWhy: webappv1.ReasonInstancesReady, wantAvailable: metav1.ConditionTrue, wantAvailWhy: webappv1.ReasonActiveInstanceServing,
	},
}

func TestSetReadyCondition(t *testing.T) {
	for _, tt := range conditionTests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
			setReadyCondition(gb, tt.obs)
			c := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(tt.wantReady))
			g.Expect(c.Reason).To(Equal(tt.wantReadyWhy))
			g.Expect(c.ObservedGeneration).To(Equal(int64(4)))
			g.Expect(c.Message).NotTo(BeEmpty())
		})
	}
}

func TestSetAvailableCondition(t *testing.T) {
	for _, tt := range conditionTests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
			setAvailableCondition(gb, tt.obs)
			c := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(tt.wantAvailable))
			g.Expect(c.Reason).To(Equal(tt.wantAvailWhy))
			g.Expect(c.Message).NotTo(BeEmpty())
		})
	}
}

func TestSetStatus(t *testing.T) {
	g := NewWithT(t)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	gb.Status.Standby = []string{"stale"}
	obs := observation{namespace: "ns", size: 2, instances: readyInstances(true, false), active: "gb-0", standby: []string{"gb-1"}}
	setStatus(gb, obs)
	g.Expect(gb.Status.Active).To(Equal("gb-0"))
	g.Expect(gb.Status.Standby).To(Equal([]string{"gb-1"}))
	g.Expect(gb.Status.ReadyReplicas).To(Equal(int32(1)))
	g.Expect(gb.Status.ObservedGeneration).To(Equal(int64(2)))

	// The transition time only moves when the status changes.
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	for i := range gb.Status.Conditions {
		gb.Status.Conditions[i].LastTransitionTime = past
	}
	obs.instances = readyInstances(true, true)
	setStatus(gb, obs)
	ready := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionReady)
	available := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionAvailable)
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(ready.LastTransitionTime).NotTo(Equal(past))
	g.Expect(available.LastTransitionTime).To(Equal(past))

	// Nothing observed: no active, no standby (nil, not empty).
	setStatus(gb, observation{namespace: "ns", namespaceMissing: true, size: 2})
	g.Expect(gb.Status.Active).To(BeEmpty())
	g.Expect(gb.Status.Standby).To(BeNil())
	g.Expect(gb.Status.ReadyReplicas).To(BeZero())
}
