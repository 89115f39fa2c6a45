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

package webhooktest

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestCELRulesRejectBeforeTheWebhooks writes objects both the CRD's CEL
// rules and the validating webhook reject. The API server validates the
// schema first, so the only cause is the CEL rule's message and no webhook
// is named: the rules hold while the webhook is down.
func TestCELRulesRejectBeforeTheWebhooks(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	tests := []struct {
		name   string
		obj    client.Object
		update func(client.Object)
		field  string
		msg    string
	}{
		{name: "Application port above 65535", obj: app(func(a *sunappsv1.Application) { a.Spec.Service.Ports[0].Port = 65536 })(ns, "cel-port"),
			field: "spec.service.ports", msg: "every port must be between 1 and 65535"},
		{name: "Application second port without name", obj: app(addPort(corev1.ServicePort{Port: 9090}))(ns, "cel-name"),
			field: "spec.service.ports", msg: "every port needs a name when there is more than one"},
		{name: "Application nodePort on a ClusterIP Service", obj: app(func(a *sunappsv1.Application) { a.Spec.Service.Ports[0].NodePort = 30090 })(ns, "cel-nodeport"),
			field: "spec.service.ports", msg: "nodePort may only be set when type is NodePort or LoadBalancer"},
		{name: "Application selector changed", obj: validApplication(ns, "cel-selector"), update: onApp(func(a *sunappsv1.Application) {
			a.Spec.Deployment.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
			a.Spec.Deployment.Template.Labels = map[string]string{"app": "other"}
		}), field: "spec.deployment.selector", msg: "selector is immutable once set"},
		{name: "Guestbook namespace changed", obj: validGuestbook(ns, "cel-namespace"), update: func(o client.Object) {
			o.(*webappv1.Guestbook).Spec.Namespace = "team-b"
		}, field: "spec.namespace", msg: "namespace is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			var err error
			if tt.update == nil {
				err = k8sClient.Create(ctx, tt.obj)
			} else {
				g.Expect(k8sClient.Create(ctx, tt.obj)).To(Succeed())
				tt.update(tt.obj)
				err = k8sClient.Update(ctx, tt.obj)
			}
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).NotTo(ContainSubstring("admission webhook"))
			g.Expect(causes(err)).To(ConsistOf(SatisfyAll(
				HaveField("Field", tt.field),
				HaveField("Message", HaveSuffix(fmt.Sprintf(": %s", tt.msg))),
			)), "error: %v", err)
		})
	}
}
