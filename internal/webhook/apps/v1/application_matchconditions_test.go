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
	"encoding/json"
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

// defaultsCondition compiles, once, the mutating Application webhook's
// matchCondition from the generated configuration, in a CEL environment
// with the variables admission gives it.
var defaultsCondition = sync.OnceValues(func() (cel.Program, error) {
	data, err := os.ReadFile(webhookManifests)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var expr string
	for {
		var cfg admissionregistrationv1.MutatingWebhookConfiguration
		if err := dec.Decode(&cfg); err != nil {
			break
		}
		for _, w := range cfg.Webhooks {
			if w.Name == "mapplication-v1.sunstrider.cn" && len(w.MatchConditions) == 1 {
				expr = w.MatchConditions[0].Expression
			}
		}
	}
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType))
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	return env.Program(ast)
})

// callsDefaulter evaluates the matchCondition on app as the API server
// holds it (unstructured JSON, integers as int64): whether the webhook is
// called.
func callsDefaulter(t *testing.T, app *sunappsv1.Application) bool {
	t.Helper()
	prg, err := defaultsCondition()
	if err != nil {
		t.Fatalf("the matchCondition of %s: %v", webhookManifests, err)
	}
	data, err := json.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	var object map[string]any
	if err := utiljson.Unmarshal(data, &object); err != nil {
		t.Fatal(err)
	}
	out, _, err := prg.Eval(map[string]any{"object": object, "oldObject": nil, "request": map[string]any{}})
	if err != nil {
		// The API server would refuse the request (failurePolicy Fail).
		t.Fatalf("the matchCondition fails on %s: %v", data, err)
	}
	call, ok := out.Value().(bool)
	if !ok {
		t.Fatalf("the matchCondition gives %v, not a bool", out)
	}
	return call
}

// checkDefaultsCondition: when the matchCondition spares the webhook,
// defaulting would not have changed app.
func checkDefaultsCondition(t *testing.T, app, old *sunappsv1.Application) {
	t.Helper()
	if callsDefaulter(t, app) {
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
	full := func() appInput {
		return appInput{name: "web", selKey: "app", selVal: "web", tmplKey: "app", tmplVal: "web", replicas: 1,
			c1Name: "web", c1Image: "nginx", p1Name: "http", p1Port: 80, p1Target: "8080", p1Proto: "TCP"}
	}
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
			in := full()
			tc.edit(&in)
			app, _ := in.build()
			if got := callsDefaulter(t, app); got != tc.call {
				t.Fatalf("webhook called = %v, want %v", got, tc.call)
			}
			checkDefaultsCondition(t, app, nil)
		})
	}
}
