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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

func TestApplicationAccess(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ports []corev1.ServicePort
		want  []string
	}{
		{name: "no ports: the Deployment only", want: []string{
			"create deployments.apps in namespace team-a", "update deployments.apps in namespace team-a"}},
		{name: "ports: the Service too", ports: []corev1.ServicePort{{Port: 80}}, want: []string{
			"create deployments.apps in namespace team-a", "update deployments.apps in namespace team-a",
			"create services in namespace team-a", "update services in namespace team-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}}
			app.Spec.Service.Ports = tc.ports
			checks := applicationAccess(app)
			got := make([]string, 0, len(checks))
			for _, c := range checks {
				got = append(got, c.String())
			}
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}
