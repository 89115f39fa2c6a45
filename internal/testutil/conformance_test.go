package testutil

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The Deletion case tells which object a logged error is about from the
// values of its logger, whatever the keys they are logged under: a renamed
// key cannot hide an error about the parent.
func TestLoggedErrorsAreAboutTheObjectTheirValuesName(t *testing.T) {
	errs := newReconcileErrors()
	opts := &ctrl.Options{Logger: funcr.New(func(string, string) {}, funcr.Options{})}
	errs.option(opts)
	log := opts.Logger.WithName("test")
	parent := types.NamespacedName{Namespace: "ns", Name: "conformance-delete"}
	boom := errors.New("boom")
	tests := []struct {
		name  string
		log   func(logr.Logger)
		about bool
	}{
		{"controller-runtime's request", func(l logr.Logger) {
			l.WithValues("controller", "c", "Drink", klog.KRef("ns", "conformance-delete"),
				"namespace", "ns", "name", "conformance-delete").Error(boom, "Reconciler error")
		}, true},
		{"its object reference alone", func(l logr.Logger) {
			l.WithValues("object", klog.KRef("ns", "conformance-delete")).Error(boom, "Reconciler error")
		}, true},
		{"keys renamed", func(l logr.Logger) {
			l.WithValues("ns", "ns").WithValues("obj", "conformance-delete").Error(boom, "failed")
		}, true},
		{"in the call", func(l logr.Logger) { l.Error(boom, "failed", "n", "conformance-delete", "s", "ns") }, true},
		{"another object", func(l logr.Logger) {
			l.WithValues("Drink", klog.KRef("ns", "other"), "namespace", "ns", "name", "other").Error(boom, "Reconciler error")
		}, false},
		{"the same name in another namespace", func(l logr.Logger) {
			l.WithValues("Drink", klog.KRef("elsewhere", "conformance-delete"), "namespace", "elsewhere",
				"name", "conformance-delete").Error(boom, "Reconciler error")
		}, false},
		{"no object", func(l logr.Logger) { l.Error(boom, "failed") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := errs.mark()
			tt.log(log)
			logged := errs.since(mark)
			if len(logged) != 1 {
				t.Fatalf("recorded %d errors, want 1", len(logged))
			}
			if got := logged[0].about(parent); got != tt.about {
				t.Errorf("about(%s) = %v, want %v (values %v)", parent, got, tt.about, logged[0].values)
			}
		})
	}
	if cluster := (loggedError{values: []any{klog.KRef("", "c")}}); !cluster.about(types.NamespacedName{Name: "c"}) {
		t.Errorf("an error about cluster-scoped c is not about it")
	}
}
