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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// webhookManifests is the generated webhook configurations the API server
// is given.
const webhookManifests = "../../../../config/webhook/manifests.yaml"

const (
	mutatingWebhook   = "mapplication-v1.sunstrider.cn"
	validatingWebhook = "vapplication-v1.sunstrider.cn"
)

// matchConditions compiles, once, the matchConditions of every webhook in
// the generated configurations, by webhook name, in a CEL environment with
// the variables admission gives them.
var matchConditions = sync.OnceValues(func() (map[string][]cel.Program, error) {
	data, err := os.ReadFile(webhookManifests)
	if err != nil {
		return nil, err
	}
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType))
	if err != nil {
		return nil, err
	}
	programs := map[string][]cel.Program{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var cfg struct {
			Webhooks []struct {
				Name            string                                   `json:"name"`
				MatchConditions []admissionregistrationv1.MatchCondition `json:"matchConditions"`
			} `json:"webhooks"`
		}
		if err := dec.Decode(&cfg); err != nil {
			if errors.Is(err, io.EOF) {
				return programs, nil
			}
			return nil, err
		}
		for _, w := range cfg.Webhooks {
			for _, c := range w.MatchConditions {
				ast, iss := env.Compile(c.Expression)
				if iss.Err() != nil {
					return nil, fmt.Errorf("%s: %s: %w", w.Name, c.Name, iss.Err())
				}
				prg, err := env.Program(ast)
				if err != nil {
					return nil, err
				}
				programs[w.Name] = append(programs[w.Name], prg)
			}
		}
	}
})

// asAdmitted is app as admission holds it: unstructured JSON, integers as
// int64; nil stays nil.
func asAdmitted(t *testing.T, app *sunappsv1.Application) any {
	t.Helper()
	if app == nil {
		return nil
	}
	data, err := json.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	var object map[string]any
	if err := utiljson.Unmarshal(data, &object); err != nil {
		t.Fatal(err)
	}
	return object
}

// callsWebhook evaluates the matchConditions of webhook as the API server
// does for operation on app (old the stored Application on update): the
// webhook is called when every one is true.
func callsWebhook(t *testing.T, webhook, operation string, app, old *sunappsv1.Application) bool {
	t.Helper()
	programs, err := matchConditions()
	if err != nil {
		t.Fatalf("the matchConditions of %s: %v", webhookManifests, err)
	}
	if len(programs[webhook]) == 0 {
		t.Fatalf("%s has no matchConditions in %s", webhook, webhookManifests)
	}
	vars := map[string]any{"object": asAdmitted(t, app), "oldObject": asAdmitted(t, old),
		"request": map[string]any{"operation": operation}}
	for _, prg := range programs[webhook] {
		out, _, err := prg.Eval(vars)
		if err != nil {
			// The API server would refuse the request (failurePolicy Fail).
			t.Fatalf("a matchCondition of %s fails on %+v: %v", webhook, app, err)
		}
		if call, ok := out.Value().(bool); !ok {
			t.Fatalf("a matchCondition of %s gives %v, not a bool", webhook, out)
		} else if !call {
			return false
		}
	}
	return true
}

// callsDefaulter tells whether the API server calls the mutating webhook
// for app (on create when old is nil, on update otherwise).
func callsDefaulter(t *testing.T, app, old *sunappsv1.Application) bool {
	t.Helper()
	operation := "CREATE"
	if old != nil {
		operation = "UPDATE"
	}
	return callsWebhook(t, mutatingWebhook, operation, app, old)
}

// spelledOut is an Application input that leaves out nothing the mutating
// webhook defaults.
func spelledOut() appInput {
	return appInput{name: "web", selKey: "app", selVal: "web", tmplKey: "app", tmplVal: "web", replicas: 1,
		c1Name: "web", c1Image: "nginx", p1Name: "http", p1Port: 80, p1Target: "8080", p1Proto: "TCP"}
}

// checkDefaultsCondition: when the matchCondition spares the webhook,
// defaulting would not have changed app.
func checkDefaultsCondition(t *testing.T, app, old *sunappsv1.Application) {
	t.Helper()
	if callsDefaulter(t, app, old) {
		return
	}
	defaulted := app.DeepCopy()
	defaultApplication(defaulted, old)
	if !equality.Semantic.DeepEqual(app, defaulted) {
		t.Fatalf("the matchCondition skips the webhook, but defaulting changes the Application:\nbefore %+v\nafter  %+v",
			app.Spec, defaulted.Spec)
	}
}

// TestDefaultsConditionSkipsOnlyWhatIsSet: the mutating webhook is skipped
// for a fully spelled-out Application, the seed's sample among them, and
// called when any one default is missing.
func TestDefaultsConditionSkipsOnlyWhatIsSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*appInput)
		call bool
	}{
		{name: "everything set", edit: func(*appInput) {}},
		{name: "a named targetPort", edit: func(in *appInput) { in.p1Target = "http" }},
		{name: "no Service", edit: func(in *appInput) { in.p1Port, in.p1Name = 0, "" }},
		{name: "a selector with matchExpressions only", edit: func(in *appInput) { in.exprOp = "Exists" }},
		{name: "no selector", edit: func(in *appInput) { in.selKey = "" }, call: true},
		{name: "no replicas", edit: func(in *appInput) { in.replicasUnsetInSpec = true }, call: true},
		{name: "a selector label missing from the template", edit: func(in *appInput) { in.tmplKey = "tier" }, call: true},
		{name: "no template labels", edit: func(in *appInput) { in.tmplKey = "" }, call: true},
		{name: "no protocol", edit: func(in *appInput) { in.p1Proto = "" }, call: true},
		{name: "no targetPort", edit: func(in *appInput) { in.p1Target = "" }, call: true},
		{name: "targetPort 0", edit: func(in *appInput) { in.p1Target = "0" }, call: true},
		{name: "a second port without targetPort", edit: func(in *appInput) { in.p2Name, in.p2Port = "https", 443 },
			call: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := spelledOut()
			tc.edit(&in)
			app, _ := in.build()
			if got := callsDefaulter(t, app, nil); got != tc.call {
				t.Fatalf("webhook called = %v, want %v", got, tc.call)
			}
			checkDefaultsCondition(t, app, nil)
		})
	}
}

// TestSpecOrLabelsChangedConditionSkipsOnlyWhatChangesNothing: the
// validating webhook is called on every create and on every update whose
// spec or labels differ in the stored JSON (the operator copies the labels
// onto the children); the updates it is spared are those ValidateUpdate
// passes without a look (the spec semantically equal, the labels equal, no
// access review).
func TestSpecOrLabelsChangedConditionSkipsOnlyWhatChangesNothing(t *testing.T) {
	stored, _ := spelledOut().build()
	stored.Labels = map[string]string{"team": "a"}
	for _, tc := range []struct {
		name      string
		operation string
		edit      func(*sunappsv1.Application)
		call      bool
	}{
		{name: "create", operation: "CREATE", edit: func(*sunappsv1.Application) {}, call: true},
		{name: "annotations and finalizers", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Annotations = map[string]string{"argocd.argoproj.io/tracking-id": "x"}
			a.Finalizers = []string{"example.com/keep"}
		}},
		{name: "the same labels written again", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Labels = map[string]string{"team": "a"}
		}},
		{name: "a label added", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Labels["tier"] = "web"
		}, call: true},
		{name: "a label changed", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Labels["team"] = "b"
		}, call: true},
		{name: "the labels removed", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Labels = nil
		}, call: true},
		{name: "replicas", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Replicas = new(int32(3))
		}, call: true},
		{name: "the image", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:2"
		}, call: true},
		{name: "a Service port", operation: "UPDATE", edit: func(a *sunappsv1.Application) {
			a.Spec.Service.Ports[0].Port = 81
		}, call: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := stored.DeepCopy()
			tc.edit(app)
			var old *sunappsv1.Application
			if tc.operation == "UPDATE" {
				old = stored
			}
			if got := callsWebhook(t, validatingWebhook, tc.operation, app, old); got != tc.call {
				t.Fatalf("webhook called = %v, want %v", got, tc.call)
			}
			if tc.call {
				return
			}
			// What ValidateUpdate checks before anything else: skipped
			// updates are those it passes as they are.
			if !equality.Semantic.DeepEqual(old.Spec, app.Spec) || !maps.Equal(old.Labels, app.Labels) {
				t.Fatal("the webhook is skipped for an update ValidateUpdate would look at")
			}
			if warnings, err := (&ApplicationValidator{}).ValidateUpdate(context.Background(), old, app); err != nil || warnings != nil {
				t.Fatalf("ValidateUpdate = %v, %v; want it to pass", warnings, err)
			}
		})
	}
}
