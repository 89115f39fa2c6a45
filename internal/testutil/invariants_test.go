package testutil

import (
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
	tests := []struct {
		name   string
		obj    *unstructured.Unstructured
		broken int
	}{
		{"no status yet", &unstructured.Unstructured{Object: map[string]any{}}, 0},
		{"ready", obj(2, 2, cond("Ready", "True", "Ready", 2)), 0},
		{"working", obj(1, 1, cond("Ready", "False", "RollingOut", 1), cond("Reconciling", "True", "RollingOut", 1)), 0},
		{"blocked", obj(1, 1, cond("Ready", "False", "ApplyFailed", 1), cond("Stalled", "True", "ApplyFailed", 1)), 0},
		{"unknown while working", obj(1, 1, cond("Ready", "Unknown", "X", 1), cond("Reconciling", "True", "X", 1)), 0},
		{"not ready, no progress condition", obj(1, 1, cond("Ready", "False", "X", 1)), 1},
		{"both", obj(1, 1, cond("Ready", "False", "X", 1), cond("Reconciling", "True", "X", 1), cond("Stalled", "True", "X", 1)), 1},
		{"reconciling while ready", obj(1, 1, cond("Ready", "True", "X", 1), cond("Reconciling", "True", "X", 1)), 1},
		{"stalled set False", obj(1, 1, cond("Ready", "False", "X", 1), cond("Reconciling", "True", "X", 1), cond("Stalled", "False", "X", 1)), 2},
		{"reason not copied", obj(1, 1, cond("Ready", "False", "X", 1), cond("Stalled", "True", "Y", 1)), 1},
		{"observed ahead", obj(1, 2, cond("Ready", "True", "X", 2)), 1},
		{"condition of another generation", obj(3, 3, cond("Ready", "True", "X", 2)), 1},
		{"progress without ready", obj(1, 1, cond("Reconciling", "True", "X", 1)), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StatusInvariants(tt.obj)
			if len(got) != tt.broken {
				t.Errorf("StatusInvariants = %q, want %d broken", got, tt.broken)
			}
		})
	}
}
