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

package settings

import "testing"

func TestGuestbookNamespaceRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ns      string
		allowed []string
		refused bool
	}{
		{name: "an ordinary namespace", ns: "team-a", refused: false},
		{name: "default", ns: "default", refused: false},
		{name: "kube-system, nothing listed", ns: "kube-system", refused: true},
		{name: "kube-public, nothing listed", ns: "kube-public", refused: true},
		{name: "kube-node-lease, another listed", ns: "kube-node-lease", allowed: []string{"kube-system"}, refused: true},
		{name: "kube-system listed", ns: "kube-system", allowed: []string{"kube-public", "kube-system"}, refused: false},
		{name: "the prefix only in the middle", ns: "my-kube-system", refused: false},
		{name: "kube without the dash", ns: "kubernetes-dashboard", refused: false},
		{name: "a listed name is matched whole", ns: "kube-system2", allowed: []string{"kube-system"}, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GuestbookNamespaceRefused(tc.ns, tc.allowed); got != tc.refused {
				t.Errorf("GuestbookNamespaceRefused(%q, %q) = %t, want %t", tc.ns, tc.allowed, got, tc.refused)
			}
		})
	}
}
