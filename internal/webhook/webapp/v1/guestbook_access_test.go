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

package v1

import (
	"testing"

	. "github.com/onsi/gomega"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

func TestGuestbookAccess(t *testing.T) {
	for _, tc := range []struct {
		name, namespace string
		configMapExists bool
		want            []string
	}{
		{name: "its namespace", namespace: "team-a", configMapExists: true, want: []string{
			"create statefulsets.apps in namespace team-a", "update statefulsets.apps in namespace team-a",
			"create services in namespace team-a", "update services in namespace team-a",
			"get configmaps/gb-config in namespace team-a"}},
		{name: "unset: the default namespace", configMapExists: true, want: []string{
			"create statefulsets.apps in namespace default", "update statefulsets.apps in namespace default",
			"create services in namespace default", "update services in namespace default",
			"get configmaps/gb-config in namespace default"}},
		{name: "a missing ConfigMap: the operator creates it", namespace: "team-a", want: []string{
			"create statefulsets.apps in namespace team-a", "update statefulsets.apps in namespace team-a",
			"create services in namespace team-a", "update services in namespace team-a",
			"get configmaps/gb-config in namespace team-a", "create configmaps in namespace team-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gb := &webappv1.Guestbook{Spec: webappv1.GuestbookSpec{Namespace: tc.namespace, ConfigMapName: "gb-config"}}
			var got []string
			for _, c := range guestbookAccess(gb, tc.configMapExists) {
				got = append(got, c.String())
			}
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}
