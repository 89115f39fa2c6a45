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

package releasecheck

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// refusal is the API server's answer when webhook refuses with an Invalid
// status holding err: it prefixes the webhook's message, keeps the causes.
func refusal(webhook string, gk schema.GroupKind, errs field.ErrorList) error {
	e := apierrors.NewInvalid(gk, ProbeName, errs)
	if webhook != "" {
		e.ErrStatus.Message = fmt.Sprintf("admission webhook %q denied the request: %s", webhook, e.ErrStatus.Message)
	}
	return e
}

func TestJudge(t *testing.T) {
	app := Probes("ns")[0]
	gk := schema.GroupKind{Group: "apps.sunstrider.cn", Kind: "Application"}
	labels := field.NewPath("spec", "deployment", "template", "metadata", "labels")
	mismatch := field.Invalid(labels, map[string]string{"apps.sunstrider.cn/application": "other"}, app.Message)
	webhookCall := apierrors.NewInternalError(errors.New(`failed calling webhook "mapplication-v1.sunstrider.cn": ` +
		`failed to call webhook: Post "https://svc:443/mutate": dial tcp 10.0.0.1:443: connect: connection refused`))
	cases := []struct {
		name string
		err  error
		want verdict
		// says is in the error of any verdict but passed.
		says string
	}{
		{"the webhook's refusal with the cause", refusal(app.Webhook, gk, field.ErrorList{mismatch}), passed, ""},
		{"the webhook's refusal among other causes",
			refusal(app.Webhook, gk, field.ErrorList{field.Required(field.NewPath("spec", "x"), ""), mismatch}), passed, ""},
		{"accepted: no webhook refused", nil, failed, "the API server accepted the dry-run create"},
		{"the cause, but from the CRD schema, not the webhook", refusal("", gk, field.ErrorList{mismatch}), failed,
			"`selector` does not match template `labels`"},
		{"the cause from another webhook", refusal("vdrink-v1.example.com", gk, field.ErrorList{mismatch}), failed,
			`want the refusal of webhook "vapplication-v1.sunstrider.cn"`},
		{"the webhook, another field", refusal(app.Webhook, gk,
			field.ErrorList{field.Invalid(labels.Child("x"), "y", app.Message)}), failed, "spec.deployment.template.metadata.labels.x"},
		{"the webhook, the field, another message", refusal(app.Webhook, gk,
			field.ErrorList{field.Invalid(labels, "y", "something else")}), failed, "something else"},
		{"a webhook the API server cannot call", webhookCall, retry, "connection refused"},
		{"a conversion webhook failure", apierrors.NewInternalError(errors.New(
			"conversion webhook for example.com/v1alpha1, Kind=Drink failed: x509: certificate signed by unknown authority")),
			retry, "x509"},
		{"unavailable", apierrors.NewServiceUnavailable("starting"), retry, "starting"},
		{"timeout", apierrors.NewTimeoutError("slow", 1), retry, "slow"},
		{"no API server", &url.Error{Op: "Post", URL: "https://10.96.0.1:443", Err: syscall.ECONNREFUSED}, retry,
			"no answer from the API server"},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Group: "apps.sunstrider.cn", Resource: "applications"},
			ProbeName, errors.New("no RBAC")), failed, "the test ServiceAccount's Role must allow: " +
			"create applications.apps.sunstrider.cn; create drinks.example.com"},
		{"the CRD is not installed", apierrors.NewNotFound(schema.GroupResource{Resource: "applications"}, ""), failed,
			"not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := judge(app, c.err)
			if got != c.want {
				t.Fatalf("verdict %s, want %s (error: %v)", got, c.want, err)
			}
			if c.want == passed {
				if err != nil {
					t.Fatalf("a pass with an error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("error %v, want it to say %q", err, c.says)
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Errorf("error %v does not wrap the answer", err)
			}
		})
	}
}

// TestProbesBreakOneRuleEach: each probe names a webhook, a field and a
// message, and its object is namespaced where asked, under ProbeName.
func TestProbesBreakOneRuleEach(t *testing.T) {
	probes := Probes("team-a")
	if len(probes) != 2 {
		t.Fatalf("%d probes, want the Application's and the Drink's", len(probes))
	}
	for _, p := range probes {
		if p.Name == "" || p.Webhook == "" || p.Field == "" || p.Message == "" {
			t.Errorf("probe %+v leaves a field empty", p)
		}
		if p.Object.GetNamespace() != "team-a" || p.Object.GetName() != ProbeName {
			t.Errorf("%s: object %s/%s, want team-a/%s", p.Name, p.Object.GetNamespace(), p.Object.GetName(), ProbeName)
		}
	}
}
