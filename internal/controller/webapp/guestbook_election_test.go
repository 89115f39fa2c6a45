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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

func TestElectActive(t *testing.T) {
	in := func(name string, ordinal int, ready bool) instance {
		return instance{Name: name, Ordinal: ordinal, Ready: ready}
	}
	tests := []struct {
		name        string
		instances   []instance
		current     string
		wantActive  string
		wantStandby []string
	}{
		{name: "no instances"},
		{
			name:        "none ready",
			instances:   []instance{in("gb-0", 0, false), in("gb-1", 1, false)},
			wantStandby: []string{"gb-0", "gb-1"},
		},
		{
			name:        "first election picks the lowest ready ordinal",
			instances:   []instance{in("gb-2", 2, true), in("gb-0", 0, false), in("gb-1", 1, true)},
			wantActive:  "gb-1",
			wantStandby: []string{"gb-0", "gb-2"},
		},
		{
			name:        "a ready active stays active even when a lower ordinal is ready",
			instances:   []instance{in("gb-0", 0, true), in("gb-1", 1, true), in("gb-2", 2, true)},
			current:     "gb-2",
			wantActive:  "gb-2",
			wantStandby: []string{"gb-0", "gb-1"},
		},
		{
			name:        "an unready active is replaced by the lowest ready standby",
			instances:   []instance{in("gb-0", 0, false), in("gb-1", 1, false), in("gb-2", 2, true), in("gb-3", 3, true)},
			current:     "gb-0",
			wantActive:  "gb-2",
			wantStandby: []string{"gb-0", "gb-1", "gb-3"},
		},
		{
			name:        "a vanished active is replaced",
			instances:   []instance{in("gb-1", 1, true), in("gb-2", 2, true)},
			current:     "gb-0",
			wantActive:  "gb-1",
			wantStandby: []string{"gb-2"},
		},
		{
			name:        "ordinals sort numerically",
			instances:   []instance{in("gb-10", 10, true), in("gb-9", 9, true)},
			wantActive:  "gb-9",
			wantStandby: []string{"gb-10"},
		},
		{
			name: "the replacement of a deleted active waits behind a ready standby",
			instances: []instance{{Name: "gb-0", Ordinal: 0, Ready: true},
				{Name: "gb-1", Ordinal: 1, Ready: true, Role: RoleStandby}, {Name: "gb-2", Ordinal: 2, Ready: true, Role: RoleStandby}},
			wantActive:  "gb-1",
			wantStandby: []string{"gb-0", "gb-2"},
		},
		{
			name:       "single ready instance",
			instances:  []instance{in("gb-0", 0, true)},
			current:    "gb-0",
			wantActive: "gb-0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			active, standby := electActive(tt.instances, tt.current)
			g.Expect(active).To(Equal(tt.wantActive))
			g.Expect(standby).To(Equal(tt.wantStandby))
		})
	}
}

func TestInstancesOf(t *testing.T) {
	g := NewWithT(t)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "gb"}}
	owned := func(name string, ready bool, role string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{LabelGuestbook: "gb"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: "gb", UID: "sts-uid", Controller: new(true),
			}},
		}}
		if role != "" {
			p.Labels[LabelRole] = role
		}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		return p
	}
	terminating := owned("gb-3", true, RoleActive)
	terminating.DeletionTimestamp = new(metav1.Now())
	foreign := owned("gb-4", true, "")
	foreign.OwnerReferences[0].Name = "other"
	badName := owned("other-5", true, "")
	noOwner := owned("gb-6", true, "")
	noOwner.OwnerReferences = nil
	// Named and labelled as an instance, its owner reference naming the
	// StatefulSet, but not the live StatefulSet's UID: anyone who may create
	// Pods in the namespace can make one.
	forged := owned("gb-7", true, RoleActive)
	forged.OwnerReferences[0].UID = "forged-uid"

	pods := []corev1.Pod{owned("gb-2", false, RoleStandby), owned("gb-0", true, RoleActive), terminating, foreign, badName,
		noOwner, forged, owned("gb-1", true, "")}
	g.Expect(instancesOf(gb, "", pods)).To(BeEmpty(), "no StatefulSet observed: no instance")
	got := instancesOf(gb, "sts-uid", pods)
	g.Expect(got).To(Equal([]instance{
		{Name: "gb-0", Ordinal: 0, Ready: true, Role: RoleActive},
		{Name: "gb-1", Ordinal: 1, Ready: true},
		{Name: "gb-2", Ordinal: 2, Ready: false, Role: RoleStandby},
		{Name: "gb-3", Ordinal: 3, Ready: false, Role: RoleActive},
	}))
	g.Expect(labelledActive(got)).To(Equal("gb-0"))
	g.Expect(rolesInSync(got, "gb-0")).To(BeFalse(), "gb-1 is unlabelled, gb-3 is labelled active")
	g.Expect(rolesInSync([]instance{{Name: "a", Role: RoleActive}, {Name: "b", Role: RoleStandby}}, "a")).To(BeTrue())
}
