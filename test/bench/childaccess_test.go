package main

import (
	"strings"
	"testing"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

func TestParseChildAccess(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []configv1alpha1.ChildAccess
		wantErr string
	}{
		{in: "", want: nil},
		{in: "Requester", want: []configv1alpha1.ChildAccess{configv1alpha1.ChildAccessRequester}},
		{in: " Requester, Delegated ", want: []configv1alpha1.ChildAccess{
			configv1alpha1.ChildAccessRequester, configv1alpha1.ChildAccessDelegated}},
		{in: "Delegated,Requester", want: []configv1alpha1.ChildAccess{
			configv1alpha1.ChildAccessDelegated, configv1alpha1.ChildAccessRequester}},
		{in: "requester", wantErr: `"requester" is not a mode`},
		{in: "Delegated,Delegated", wantErr: "given twice"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseChildAccess(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestIsOperator(t *testing.T) {
	for variant, want := range map[string]bool{
		"operator": true, operatorVariant(configv1alpha1.ChildAccessDelegated): true,
		"floor (plain client)": false, appFloorVariant: false, "seed design": false, "operators": false,
	} {
		if got := isOperator(variant); got != want {
			t.Errorf("isOperator(%q) = %v, want %v", variant, got, want)
		}
	}
}

func TestOperatorNames(t *testing.T) {
	for _, tc := range []struct {
		mode                   configv1alpha1.ChildAccess
		variant, prefix, label string
	}{
		{"", "operator", "bench-operator", "operator-1000"},
		{configv1alpha1.ChildAccessDelegated, "operator (Delegated)", "bench-operator-delegated", "operator-delegated-1000"},
		{webhooksOff, "operator (webhooks off)", "bench-operator-webhooks-off", "operator-webhooks-off-1000"},
	} {
		variant, prefix, label := operatorNames(tc.mode, 1000)
		if variant != tc.variant || prefix != tc.prefix || label != tc.label {
			t.Errorf("operatorNames(%q) = %q, %q, %q; want %q, %q, %q", tc.mode, variant, prefix, label,
				tc.variant, tc.prefix, tc.label)
		}
		if !isOperator(variant) {
			t.Errorf("isOperator(%q) = false: its verdicts would be missing", variant)
		}
	}
}

func TestStatusWriteOfLogLevel(t *testing.T) {
	config := func(rv string, generation int64, level configv1alpha1.LogLevel,
		access configv1alpha1.ChildAccess) *configv1alpha1.OperatorConfiguration {
		c := &configv1alpha1.OperatorConfiguration{}
		c.ResourceVersion, c.Generation = rv, generation
		c.Status.Effective.LogLevel, c.Status.Effective.ChildAccess = level, access
		return c
	}
	info := config("10", 1, configv1alpha1.LogLevelInfo, configv1alpha1.ChildAccessRequester)
	for _, tc := range []struct {
		name  string
		after *configv1alpha1.OperatorConfiguration
		want  bool
	}{
		{"the log level alone went to debug", config("11", 1, configv1alpha1.LogLevelDebug,
			configv1alpha1.ChildAccessRequester), true},
		{"not written", config("10", 1, configv1alpha1.LogLevelInfo, configv1alpha1.ChildAccessRequester), false},
		{"written, the log level unchanged", config("11", 1, configv1alpha1.LogLevelInfo,
			configv1alpha1.ChildAccessRequester), false},
		{"another effective field changed too", config("11", 1, configv1alpha1.LogLevelDebug,
			configv1alpha1.ChildAccessDelegated), false},
		{"the spec changed", config("11", 2, configv1alpha1.LogLevelDebug, configv1alpha1.ChildAccessRequester), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusWriteOfLogLevel(info, tc.after); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"operator": "operator", operatorVariant(configv1alpha1.ChildAccessRequester): "operator-Requester",
		"seed design": "seed-design",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}
