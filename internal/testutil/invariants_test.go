package testutil

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"sunstrider.cn/operator/internal/apply"
)

func TestStatusInvariants(t *testing.T) {
	cond := func(typ, status, reason string, gen int64) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": "m " + reason, "observedGeneration": gen}
	}
	obj := func(gen, observed int64, conds ...map[string]any) *unstructured.Unstructured {
		list := make([]any, 0, len(conds))
		for _, c := range conds {
			list = append(list, c)
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"status": map[string]any{"observedGeneration": observed, "conditions": list},
		}}
		u.SetGeneration(gen)
		return u
	}
	// broken is every rule the status breaks, as StatusInvariants words
	// it: the rule, not just how many.
	tests := []struct {
		name   string
		obj    *unstructured.Unstructured
		broken []string
	}{
		{"no status yet", &unstructured.Unstructured{Object: map[string]any{}}, nil},
		{"ready", obj(2, 2, cond("Ready", "True", "Ready", 2)), nil},
		{"working", obj(1, 1, cond("Ready", "False", "RollingOut", 1), cond("Reconciling", "True", "RollingOut", 1)), nil},
		{"blocked", obj(1, 1, cond("Ready", "False", "ApplyFailed", 1), cond("Stalled", "True", "ApplyFailed", 1)), nil},
		{"unknown while working", obj(1, 1, cond("Ready", "Unknown", "X", 1), cond("Reconciling", "True", "X", 1)), nil},
		{"not ready, no progress condition", obj(1, 1, cond("Ready", "False", "X", 1)),
			[]string{"Ready is False (X) with neither Reconciling nor Stalled"}},
		{"both", obj(1, 1, cond("Ready", "False", "X", 1), cond("Reconciling", "True", "X", 1), cond("Stalled", "True", "X", 1)),
			[]string{"Reconciling and Stalled both exist"}},
		{"reconciling while ready", obj(1, 1, cond("Ready", "True", "X", 1), cond("Reconciling", "True", "X", 1)),
			[]string{"Reconciling while Ready is True"}},
		{"stalled while ready", obj(1, 1, cond("Ready", "True", "X", 1), cond("Stalled", "True", "X", 1)),
			[]string{"Stalled while Ready is True"}},
		{"stalled set False", obj(1, 1, cond("Ready", "False", "X", 1), cond("Reconciling", "True", "X", 1), cond("Stalled", "False", "X", 1)),
			[]string{"Stalled is False: it must be removed, not set other than True", "Reconciling and Stalled both exist"}},
		{"reason not copied", obj(1, 1, cond("Ready", "False", "X", 1), cond("Stalled", "True", "Y", 1)),
			[]string{"Stalled (Y: m Y) does not copy Ready (X: m X)"}},
		{"observed ahead", obj(1, 2, cond("Ready", "True", "X", 2)),
			[]string{"status.observedGeneration 2 is ahead of generation 1"}},
		{"condition of another generation", obj(3, 3, cond("Ready", "True", "X", 2)),
			[]string{"Ready is for generation 2, status.observedGeneration is 3"}},
		{"progress condition of another generation", obj(3, 3, cond("Ready", "False", "X", 3), cond("Reconciling", "True", "X", 2)),
			[]string{"Reconciling is for generation 2, status.observedGeneration is 3"}},
		{"progress without ready", obj(1, 1, cond("Reconciling", "True", "X", 1)),
			[]string{"Reconciling without Ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusInvariants(tt.obj); !slices.Equal(got, tt.broken) {
				t.Errorf("StatusInvariants = %q, want %q", got, tt.broken)
			}
		})
	}
}

// A checker fails a kind of which it saw no status.observedGeneration the
// operator wrote: neither a status written by someone else nor one the
// operator wrote without observedGeneration counts.
func TestInvariantCheckerFailsAKindItNeverChecked(t *testing.T) {
	application := schema.GroupVersionKind{Group: "apps.sunstrider.cn", Version: "v1", Kind: "Application"}
	guestbook := schema.GroupVersionKind{Group: "webapp.sunstrider.cn", Version: "v1", Kind: "Guestbook"}
	// version is an object of kind whose status (observedGeneration 1
	// when observed, Ready True) was written by manager, owning fields.
	version := func(kind schema.GroupVersionKind, manager string, observed bool, fields map[string]any) *unstructured.Unstructured {
		status := map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "R", "message": "m", "observedGeneration": int64(1),
		}}}
		if observed {
			status["observedGeneration"] = int64(1)
		}
		u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
		u.SetGroupVersionKind(kind)
		u.SetNamespace("ns")
		u.SetName("x")
		u.SetGeneration(1)
		u.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{
			"manager": manager, "operation": "Update", "subresource": "status", "apiVersion": kind.GroupVersion().String(),
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:status": fields},
		}}
		return u
	}
	owned := map[string]any{".": map[string]any{}, "f:observedGeneration": map[string]any{}, "f:conditions": map[string]any{}}
	conditionsOnly := map[string]any{".": map[string]any{}, "f:conditions": map[string]any{}}
	tests := []struct {
		name     string
		versions []*unstructured.Unstructured
		// unchecked are the kinds the report must name as never checked.
		unchecked []string
	}{
		{"nothing seen", nil, []string{"Application", "Guestbook"}},
		{"both written by the operator", []*unstructured.Unstructured{
			version(application, SuiteManagerAgent, true, owned), version(guestbook, apply.FieldOwner, true, owned),
		}, nil},
		{"one kind written by a test's client", []*unstructured.Unstructured{
			version(application, SuiteManagerAgent, true, owned), version(guestbook, "webapp.test", true, owned),
		}, []string{"Guestbook"}},
		{"observedGeneration unset", []*unstructured.Unstructured{
			version(application, SuiteManagerAgent, false, conditionsOnly), version(guestbook, SuiteManagerAgent, true, owned),
		}, []string{"Application"}},
		{"observedGeneration written by someone else", []*unstructured.Unstructured{
			version(application, SuiteManagerAgent, true, conditionsOnly), version(guestbook, SuiteManagerAgent, true, owned),
		}, []string{"Application"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ic := newInvariantChecker([]schema.GroupVersionKind{application, guestbook}, func() {})
			for _, v := range tt.versions {
				ic.check(v)
			}
			if filtered := ic.Report(false); filtered != "" {
				t.Errorf("Report(false) = %q, want none: a run of some tests may check no object of a kind", filtered)
			}
			found := ic.Unchecked()
			unchecked := make([]string, 0, len(found))
			for _, b := range found {
				kind, _, _ := strings.Cut(b, ":")
				unchecked = append(unchecked, kind)
			}
			if !slices.Equal(unchecked, tt.unchecked) {
				t.Errorf("Unchecked = %q, want %v", found, tt.unchecked)
			}
			report := ic.Report(true)
			if len(tt.unchecked) == 0 && report != "" {
				t.Errorf("Report(true) = %q, want none", report)
			}
			for _, kind := range tt.unchecked {
				if !strings.Contains(report, kind+": no status written by the operator") {
					t.Errorf("Report(true) = %q, want it to name %s", report, kind)
				}
			}
		})
	}
}

// A broken rule fails a run of some tests as well as the whole suite.
func TestInvariantCheckerReportsABrokenRuleInAnyRun(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "example.sunstrider.cn", Version: "v1", Kind: "Drink"}
	ic := newInvariantChecker([]schema.GroupVersionKind{kind}, func() {})
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Reconciling", "status": "True", "reason": "X", "message": "m"},
	}}}}
	u.SetGroupVersionKind(kind)
	u.SetNamespace("ns")
	u.SetName("d")
	ic.check(u)
	for _, whole := range []bool{false, true} {
		if report := ic.Report(whole); !strings.Contains(report, "Drink ns/d generation 0 resourceVersion : Reconciling without Ready") {
			t.Errorf("Report(%v) = %q, want the broken rule", whole, report)
		}
	}
}
