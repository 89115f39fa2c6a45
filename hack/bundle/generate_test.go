package main

import (
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestWebhookDefinitionsMatchConditions: a CSV has no field for
// matchConditions; only skipConditions, which spare calls whose answer is
// known, may be left out of it.
func TestWebhookDefinitionsMatchConditions(t *testing.T) {
	hook := func(conditions ...string) map[string]any {
		h := map[string]any{
			"name":                    "mapplication-v1.sunstrider.cn",
			"clientConfig":            map[string]any{"service": map[string]any{"path": "/mutate"}},
			"sideEffects":             "None",
			"admissionReviewVersions": []any{"v1"},
		}
		if len(conditions) > 0 {
			conds := make([]any, 0, len(conditions))
			for _, name := range conditions {
				conds = append(conds, map[string]any{"name": name, "expression": "true"})
			}
			h["matchConditions"] = conds
		}
		return h
	}
	for _, tc := range []struct {
		name    string
		kind    string
		hook    map[string]any
		wantErr string
	}{
		{name: "mutating, no condition", kind: "MutatingWebhookConfiguration", hook: hook()},
		{name: "mutating, defaults-to-set", kind: "MutatingWebhookConfiguration", hook: hook("defaults-to-set")},
		{name: "validating, spec-or-labels-changed", kind: "ValidatingWebhookConfiguration",
			hook: hook("spec-or-labels-changed")},
		{name: "both skip conditions", kind: "MutatingWebhookConfiguration",
			hook: hook("defaults-to-set", "spec-or-labels-changed")},
		{name: "another condition too", kind: "MutatingWebhookConfiguration",
			hook: hook("defaults-to-set", "only-some-users"), wantErr: "has matchConditions"},
		{name: "another condition alone", kind: "ValidatingWebhookConfiguration",
			hook: hook("only-some-users"), wantErr: "has matchConditions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &classified{}
			cfg.webhooks = append(cfg.webhooks, webhookConfiguration(tc.kind, tc.hook))
			defs, err := webhookDefinitions(cfg, "manager", 9443)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := v1alpha1.MutatingAdmissionWebhook
			if tc.kind == "ValidatingWebhookConfiguration" {
				want = v1alpha1.ValidatingAdmissionWebhook
			}
			if len(defs) != 1 || defs[0].Type != want || *defs[0].WebhookPath != "/mutate" {
				t.Fatalf("definitions = %+v, want the one %s webhook at /mutate", defs, want)
			}
		})
	}
}

// webhookConfiguration is a webhook configuration of kind with one webhook.
func webhookConfiguration(kind string, hook map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       kind,
		"webhooks":   []any{hook},
	}}
}
