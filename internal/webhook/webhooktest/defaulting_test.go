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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
	"sunstrider.cn/operator/internal/testutil"
)

func TestApplicationDefaultsAreStored(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApplication(ns, "plain")
	app.Spec.Deployment.Template.Labels = map[string]string{"tier": "web"}
	app.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")}}
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())

	got := &sunappsv1.Application{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), got)).To(Succeed())
	d := got.Spec.Deployment
	g.Expect(d.Selector).To(Equal(&metav1.LabelSelector{MatchLabels: map[string]string{appscontroller.ApplicationLabel: "plain"}}))
	g.Expect(d.Template.Labels).To(Equal(map[string]string{"tier": "web", appscontroller.ApplicationLabel: "plain"}))
	g.Expect(d.Replicas).To(Equal(ptr.To[int32](1)))
	g.Expect(got.Spec.Service.Ports).To(Equal([]corev1.ServicePort{
		{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")},
	}))
}

// TestApplicationWithGenerateNameGetsNoSelector: the API server generates
// the name after admission, so the webhook cannot derive the selector from
// it; the controller derives the same one from the final name.
func TestApplicationWithGenerateNameGetsNoSelector(t *testing.T) {
	g := NewWithT(t)
	app := minimalApplication(testutil.Namespace(t, k8sClient), "")
	app.GenerateName = "gen-"
	g.Expect(k8sClient.Create(context.Background(), app)).To(Succeed())
	g.Expect(app.Name).To(HavePrefix("gen-"))
	g.Expect(app.Spec.Deployment.Selector).To(BeNil())
	g.Expect(app.Spec.Deployment.Replicas).To(Equal(ptr.To[int32](1)))
}

func TestApplicationKeepsItsSelectorWhenAnUpdateLeavesItOut(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	app := validApplication(testutil.Namespace(t, k8sClient), "kept")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	want := app.Spec.Deployment.Selector.DeepCopy()

	app.Spec.Deployment.Selector = nil
	app.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:1.28"
	g.Expect(k8sClient.Update(ctx, app)).To(Succeed())
	g.Expect(app.Spec.Deployment.Selector).To(Equal(want))
	g.Expect(app.Spec.Deployment.Template.Spec.Containers[0].Image).To(Equal("nginx:1.28"))
}

// TestReapplyingAManifestWithoutSelectorSucceeds is the server-side apply
// round trip: the defaulted selector belongs to the applier, so a re-apply
// of the same manifest drops it, and the webhook must put it back.
func TestReapplyingAManifestWithoutSelectorSucceeds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	manifest := func(image string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": sunappsv1.GroupVersion.String(),
			"kind":       "Application",
			"metadata":   map[string]any{"name": "applied", "namespace": ns},
			"spec": map[string]any{"deployment": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "web", "image": image}},
			}}}},
		}}
	}
	apply := func(image string) {
		g.Expect(k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(manifest(image)),
			client.FieldOwner("kubectl"), client.ForceOwnership)).To(Succeed())
	}
	apply("nginx:1.27")
	apply("nginx:1.28")

	got := &sunappsv1.Application{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "applied"}, got)).To(Succeed())
	g.Expect(got.Spec.Deployment.Selector.MatchLabels).To(Equal(map[string]string{appscontroller.ApplicationLabel: "applied"}))
	g.Expect(got.Spec.Deployment.Template.Spec.Containers[0].Image).To(Equal("nginx:1.28"))
}

func TestGuestbookNamespaceDefaultsToDefault(t *testing.T) {
	g := NewWithT(t)
	gb := validGuestbook(testutil.Namespace(t, k8sClient), "defaulted")
	gb.Spec.Namespace = ""
	g.Expect(k8sClient.Create(context.Background(), gb)).To(Succeed())
	g.Expect(gb.Spec.Namespace).To(Equal(webappv1.DefaultNamespace))
}
