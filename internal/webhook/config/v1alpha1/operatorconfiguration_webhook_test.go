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

package v1alpha1

import (
	"testing"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// A change is a change of the mode in effect: unset is Requester, so
// spelling the default out (or dropping it) is none; a create is a change
// from the default.
func TestChildAccessChange(t *testing.T) {
	const (
		none      = configv1alpha1.ChildAccess("")
		requester = configv1alpha1.ChildAccessRequester
		delegated = configv1alpha1.ChildAccessDelegated
	)
	cfg := func(mode configv1alpha1.ChildAccess) *configv1alpha1.OperatorConfiguration {
		return &configv1alpha1.OperatorConfiguration{Spec: configv1alpha1.OperatorConfigurationSpec{ChildAccess: mode}}
	}
	for _, tt := range []struct {
		name     string
		old      *configv1alpha1.OperatorConfiguration
		new      *configv1alpha1.OperatorConfiguration
		from, to configv1alpha1.ChildAccess
		changed  bool
	}{
		{name: "create, unset", new: cfg(none), from: requester, to: requester},
		{name: "create, the default spelt out", new: cfg(requester), from: requester, to: requester},
		{name: "create, delegated", new: cfg(delegated), from: requester, to: delegated, changed: true},
		{name: "update, unset to requester", old: cfg(none), new: cfg(requester), from: requester, to: requester},
		{name: "update, requester to unset", old: cfg(requester), new: cfg(none), from: requester, to: requester},
		{name: "update, unset to delegated", old: cfg(none), new: cfg(delegated), from: requester, to: delegated, changed: true},
		{name: "update, delegated to unset", old: cfg(delegated), new: cfg(none), from: delegated, to: requester, changed: true},
		{name: "update, delegated kept", old: cfg(delegated), new: cfg(delegated), from: delegated, to: delegated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			from, to, changed := childAccessChange(tt.old, tt.new)
			if from != tt.from || to != tt.to || changed != tt.changed {
				t.Errorf("childAccessChange = %s, %s, %v; want %s, %s, %v", from, to, changed, tt.from, tt.to, tt.changed)
			}
		})
	}
}
