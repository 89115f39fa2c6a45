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
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// bySchema marks a rejection by the CRD schema (OpenAPI or CEL), which the
// API server applies before any validating webhook.
const bySchema = ""

// rejection is an invalid write: the creation of obj or, when update is set,
// the update of obj (created first, valid) that update makes.
type rejection struct {
	name   string
	obj    func(ns, name string) client.Object
	update func(client.Object)
	// field and msg are the field path and a substring of the message of
	// one cause of the Invalid error.
	field, msg string
	// by is the validating webhook that rejects, or bySchema.
	by string
}

// app adapts an Application constructor and mutation to a rejection's obj.
func app(mutate func(*sunappsv1.Application)) func(ns, name string) client.Object {
	return func(ns, name string) client.Object {
		a := validApplication(ns, name)
		if mutate != nil {
			mutate(a)
		}
		return a
	}
}

func onApp(mutate func(*sunappsv1.Application)) func(client.Object) {
	return func(o client.Object) { mutate(o.(*sunappsv1.Application)) }
}

func addPort(p corev1.ServicePort) func(*sunappsv1.Application) {
	return func(a *sunappsv1.Application) { a.Spec.Service.Ports = append(a.Spec.Service.Ports, p) }
}

var rejections = []rejection{
	// Application, rejected by its webhook.
	{name: "template label contradicts the selector", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Template.Labels["app"] = "other"
	}), field: "spec.deployment.template.metadata.labels", msg: "`selector` does not match template `labels`", by: applicationWebhook},
	{name: "template labels miss a selector expression", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}
	}), field: "spec.deployment.template.metadata.labels", msg: "`selector` does not match template `labels`", by: applicationWebhook},
	{name: "template label contradicts the defaulted selector", obj: func(ns, name string) client.Object {
		a := minimalApplication(ns, name)
		a.Spec.Deployment.Template.Labels = map[string]string{"apps.sunstrider.cn/application": "someone-else"}
		return a
	}, field: "spec.deployment.template.metadata.labels", msg: "`selector` does not match template `labels`", by: applicationWebhook},
	{name: "selector operator unknown", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}
	}), field: "spec.deployment.selector.matchExpressions[0].operator", msg: "not a valid selector operator", by: applicationWebhook},
	{name: "no container", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Template.Spec.Containers = []corev1.Container{}
	}), field: "spec.deployment.template.spec.containers", msg: "at least one container", by: applicationWebhook},
	{name: "container name not a DNS label", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Template.Spec.Containers[0].Name = "Web_1"
	}), field: "spec.deployment.template.spec.containers[0].name", msg: "RFC 1123 label", by: applicationWebhook},
	{name: "container without image", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Template.Spec.Containers[0].Image = ""
	}), field: "spec.deployment.template.spec.containers[0].image", msg: "Required value", by: applicationWebhook},
	{name: "duplicate port name", obj: app(addPort(corev1.ServicePort{Name: "http", Port: 8080})),
		field: "spec.service.ports[1].name", msg: `Duplicate value: "http"`, by: applicationWebhook},
	{name: "unsupported protocol", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Service.Ports[0].Protocol = "ICMP"
	}), field: "spec.service.ports[0].protocol", msg: `Unsupported value: "ICMP"`, by: applicationWebhook},
	{name: "port name not a DNS label", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Service.Ports[0].Name = "HTTP"
	}), field: "spec.service.ports[0].name", msg: "RFC 1123 label", by: applicationWebhook},
	{name: "target port out of range", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Service.Ports[0].TargetPort = intstr.FromInt32(70000)
	}), field: "spec.service.ports[0].targetPort", msg: "between 1 and 65535", by: applicationWebhook},
	// A node port outside the cluster's range is the API server's to refuse,
	// on the Service; only a number that is no port at all is malformed.
	{name: "node port not a port number", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Service.Type = corev1.ServiceTypeNodePort
		a.Spec.Service.Ports[0].NodePort = 70000
	}), field: "spec.service.ports[0].nodePort", msg: "between 1 and 65535", by: applicationWebhook},
	{name: "update makes a template label contradict the selector", obj: app(nil), update: onApp(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Template.Labels["app"] = "other"
	}), field: "spec.deployment.template.metadata.labels", msg: "`selector` does not match template `labels`", by: applicationWebhook},
	// What the operator copies into the children is bounded (well below the
	// API server's own limits: 3 MiB per request, 1.5 MiB per object).
	{name: "deployment spec of 300 KiB", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", 300<<10)}}
	}), field: "spec.deployment", msg: "may not be more than 131072 bytes", by: applicationWebhook},
	{name: "update makes the service spec 70 KiB", obj: app(nil), update: onApp(func(a *sunappsv1.Application) {
		a.Spec.Service.LoadBalancerSourceRanges = slices.Repeat([]string{"192.168.100.0/24"}, 70<<10/len(`"192.168.100.0/24",`)+1)
	}), field: "spec.service", msg: "may not be more than 65536 bytes", by: applicationWebhook},

	// Application, rejected by its schema before the webhook.
	{name: "port zero", obj: app(func(a *sunappsv1.Application) { a.Spec.Service.Ports[0].Port = 0 }),
		field: "spec.service.ports", msg: "every port must be between 1 and 65535", by: bySchema},
	{name: "duplicate container name", obj: app(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Template.Spec.Containers = append(a.Spec.Deployment.Template.Spec.Containers, corev1.Container{Name: "web", Image: "busybox"})
	}), field: "spec.deployment.template.spec.containers[1]", msg: "Duplicate value", by: bySchema},
	{name: "update changes the selector", obj: app(nil), update: onApp(func(a *sunappsv1.Application) {
		a.Spec.Deployment.Selector.MatchLabels["app"] = "renamed"
		a.Spec.Deployment.Template.Labels["app"] = "renamed"
	}), field: "spec.deployment.selector", msg: "selector is immutable once set", by: bySchema},

	// MyCustomResource: its schema holds all its webhook's rules.
	{name: "friend name not a Pod name", obj: func(ns, name string) client.Object {
		m := validMyCustomResource(ns, name)
		m.Spec.Name = "My_Pod"
		return m
	}, field: "spec.name", msg: "should match", by: bySchema},
	{name: "update sets a friend name too long", obj: func(ns, name string) client.Object { return validMyCustomResource(ns, name) },
		update: func(o client.Object) { o.(*pocv1.MyCustomResource).Spec.Name = strings.Repeat("a", 254) },
		field:  "spec.name", msg: "may not be more than 253", by: bySchema},

	// Guestbook: its schema holds all its webhook's rules.
	{name: "guestbook size 11", obj: func(ns, name string) client.Object {
		g := validGuestbook(ns, name)
		g.Spec.Size = 11
		return g
	}, field: "spec.size", msg: "less than or equal to 10", by: bySchema},
	{name: "guestbook configMapName too long", obj: func(ns, name string) client.Object {
		g := validGuestbook(ns, name)
		g.Spec.ConfigMapName = "a-very-long-name"
		return g
	}, field: "spec.configMapName", msg: "may not be more than 15", by: bySchema},
	{name: "guestbook alias unknown", obj: func(ns, name string) client.Object {
		g := validGuestbook(ns, name)
		g.Spec.Type = "Email"
		return g
	}, field: "spec.alias", msg: `Unsupported value: "Email"`, by: bySchema},
	{name: "guestbook namespace changed", obj: func(ns, name string) client.Object { return validGuestbook(ns, name) },
		update: func(o client.Object) { o.(*webappv1.Guestbook).Spec.Namespace = "team-b" },
		field:  "spec.namespace", msg: "namespace is immutable", by: bySchema},

	// Drink: the v1beta1 size annotation only its webhook checks.
	{name: "drink size annotation unknown", obj: func(ns, name string) client.Object {
		d := validDrink(ns, name)
		d.Annotations = map[string]string{examplev1beta1.SizeAnnotation: "Huge"}
		return d
	}, field: "metadata.annotations[" + examplev1beta1.SizeAnnotation + "]", msg: `Unsupported value: "Huge"`, by: drinkWebhook},
}

func TestInvalidObjectsAreRejected(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	for i, r := range rejections {
		t.Run(r.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			obj := r.obj(ns, fmt.Sprintf("invalid-%02d", i))
			if r.update == nil {
				expectRejected(g, k8sClient.Create(ctx, obj), r)
				g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), emptyCopy(obj)))).
					To(BeTrue(), "nothing is stored")
				return
			}
			g.Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			stored := obj.GetResourceVersion()
			r.update(obj)
			expectRejected(g, k8sClient.Update(ctx, obj), r)
			after := emptyCopy(obj)
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), after)).To(Succeed())
			g.Expect(after.GetResourceVersion()).To(Equal(stored), "the stored object is unchanged")
		})
	}
}

// expectRejected checks err is the Invalid error r describes, from the
// webhook r names or, for bySchema, from no webhook at all.
func expectRejected(g Gomega, err error, r rejection) {
	g.ExpectWithOffset(1, apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.ExpectWithOffset(1, causes(err)).To(ContainElement(SatisfyAll(
		HaveField("Field", r.field),
		HaveField("Message", ContainSubstring(r.msg)),
	)), "error: %v", err)
	if r.by == bySchema {
		g.ExpectWithOffset(1, err.Error()).NotTo(ContainSubstring("admission webhook"))
		return
	}
	g.ExpectWithOffset(1, err.Error()).To(ContainSubstring(fmt.Sprintf("admission webhook %q denied the request", r.by)))
}

// causes returns the field causes of an API error.
func causes(err error) []metav1.StatusCause {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	return status.Status().Details.Causes
}

func emptyCopy(obj client.Object) client.Object {
	out := obj.DeepCopyObject().(client.Object)
	out.SetResourceVersion("")
	return out
}
