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
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
	"sunstrider.cn/operator/internal/testutil"
)

const (
	mutateApplicationPath   = "/mutate-apps-sunstrider-cn-v1-application"
	validateApplicationPath = "/validate-apps-sunstrider-cn-v1-application"
)

// webhookCalls is how many requests the manager's webhook server answered
// on path.
func webhookCalls(g Gomega, path string) float64 {
	n, err := testutil.WebhookRequestTotal(path)
	g.Expect(err).NotTo(HaveOccurred())
	return n
}

// spelledOutApplication is an Application that leaves out nothing the
// mutating webhook defaults.
func spelledOutApplication(ns, name string) *sunappsv1.Application {
	app := minimalApplication(ns, name)
	d := &app.Spec.Deployment
	d.Replicas = ptr.To[int32](1)
	d.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	d.Template.Labels = map[string]string{"app": name}
	app.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}
	return app
}

// TestSpelledOutApplicationSkipsTheMutatingWebhook: the seed's sample
// spells out everything the mutating webhook defaults (the protocols come
// from the CRD schema), so the API server does not call that webhook
// (matchConditions) and stores the sample as written; the validating
// webhook, the access check among its work, is still called.
func TestSpelledOutApplicationSkipsTheMutatingWebhook(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	data, err := os.ReadFile("../../../config/samples/apps_v1_application.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	app := &sunappsv1.Application{}
	g.Expect(yaml.UnmarshalStrict(data, app)).To(Succeed())
	app.Namespace = ns
	want := app.Spec.DeepCopy()
	// The CRD schema's defaults, set before admission.
	want.Service.Ports[0].Protocol = corev1.ProtocolTCP
	want.Deployment.Template.Spec.Containers[0].Ports[0].Protocol = corev1.ProtocolTCP

	mutated, validated := webhookCalls(g, mutateApplicationPath), webhookCalls(g, validateApplicationPath)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Expect(webhookCalls(g, validateApplicationPath)).To(Equal(validated+1), "the validating webhook is called")
	g.Expect(webhookCalls(g, mutateApplicationPath)).To(Equal(mutated), "the mutating webhook is not")

	got := &sunappsv1.Application{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(*want), "stored as written, with the CRD's protocol defaults: %s", cmp.Diff(*want, got.Spec))
}

// TestApplicationMissingADefaultCallsTheMutatingWebhook: each default the
// webhook sets, when left out, makes the API server call it, and the stored
// Application carries the default.
func TestApplicationMissingADefaultCallsTheMutatingWebhook(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*sunappsv1.Application)
		check func(Gomega, *sunappsv1.Application)
	}{{
		name: "no selector",
		edit: func(a *sunappsv1.Application) { a.Spec.Deployment.Selector = nil },
		check: func(g Gomega, a *sunappsv1.Application) {
			g.Expect(a.Spec.Deployment.Selector.MatchLabels).To(HaveKeyWithValue(appscontroller.ApplicationLabel, a.Name))
		},
	}, {
		name: "a selector label missing from the template",
		edit: func(a *sunappsv1.Application) { a.Spec.Deployment.Template.Labels = map[string]string{"tier": "web"} },
		check: func(g Gomega, a *sunappsv1.Application) {
			g.Expect(a.Spec.Deployment.Template.Labels).To(Equal(map[string]string{"tier": "web", "app": a.Name}))
		},
	}, {
		name: "no targetPort",
		edit: func(a *sunappsv1.Application) { a.Spec.Service.Ports[0].TargetPort = intstr.IntOrString{} },
		check: func(g Gomega, a *sunappsv1.Application) {
			g.Expect(a.Spec.Service.Ports[0].TargetPort).To(Equal(intstr.FromInt32(80)))
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := testutil.Namespace(t, k8sClient)
			app := spelledOutApplication(ns, "web")
			tc.edit(app)
			mutated := webhookCalls(g, mutateApplicationPath)
			g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
			g.Expect(webhookCalls(g, mutateApplicationPath)).To(Equal(mutated+1), "the mutating webhook is called")
			got := &sunappsv1.Application{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), got)).To(Succeed())
			tc.check(g, got)
		})
	}
}

// TestUpdateLeavingTheSpecAndLabelsCallsNoWebhook: an annotation and a
// finalizer written on a spelled-out Application (as Argo CD or a
// finalizer-holding tool do) reach neither webhook; a label, which the
// operator copies onto the children, reaches the validating one, as does a
// spec change, which shows the webhooks were there to be called.
func TestUpdateLeavingTheSpecAndLabelsCallsNoWebhook(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := spelledOutApplication(ns, "web")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())

	mutated, validated := webhookCalls(g, mutateApplicationPath), webhookCalls(g, validateApplicationPath)
	annotated := app.DeepCopy()
	annotated.Annotations = map[string]string{"argocd.argoproj.io/tracking-id": "x"}
	annotated.Finalizers = []string{"example.com/keep"}
	g.Expect(k8sClient.Patch(ctx, annotated, client.MergeFrom(app))).To(Succeed())
	g.Expect(annotated.Finalizers).To(ConsistOf("example.com/keep"))
	g.Expect(webhookCalls(g, mutateApplicationPath)).To(Equal(mutated), "the mutating webhook is not called")
	g.Expect(webhookCalls(g, validateApplicationPath)).To(Equal(validated), "nor the validating one")

	labelled := annotated.DeepCopy()
	labelled.Labels = map[string]string{"team": "a"}
	g.Expect(k8sClient.Patch(ctx, labelled, client.MergeFrom(annotated))).To(Succeed())
	// A write that reaches a webhook may reach it twice: kube-apiserver
	// first applies a patch to its watch cache's copy, and when that copy
	// is behind the write just made, storage refuses it and the update,
	// admission included, runs again on the stored object. So "called" is
	// "counted more than before", while "not called" stays exact: a write
	// that calls no webhook calls none on its second try either.
	labelValidated := webhookCalls(g, validateApplicationPath)
	g.Expect(labelValidated).To(BeNumerically(">", validated), "a label is validated")

	scaled := labelled.DeepCopy()
	scaled.Spec.Deployment.Replicas = ptr.To[int32](2)
	scaled.Finalizers = nil
	g.Expect(k8sClient.Patch(ctx, scaled, client.MergeFrom(labelled))).To(Succeed())
	g.Expect(webhookCalls(g, validateApplicationPath)).To(BeNumerically(">", labelValidated), "a spec change is validated")
	g.Expect(webhookCalls(g, mutateApplicationPath)).To(Equal(mutated), "with nothing to default")
}
