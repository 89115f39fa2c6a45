package testutil

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
