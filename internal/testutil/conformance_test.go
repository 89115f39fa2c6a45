package testutil

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Deletion case tells which object a logged error is about from the
// values of its logger, whatever the keys they are logged under: a renamed
// key cannot hide an error about the parent.
func TestLoggedErrorsAreAboutTheObjectTheirValuesName(t *testing.T) {
	errs := newManagerLog()
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

// An adapter that says too little is refused before any case runs: a case
// declared not to apply must say why, and a case that applies must have
// what it needs.
func TestConformanceKindProblems(t *testing.T) {
	child := func(change func(*ConformanceChild)) ConformanceChild {
		ch := ConformanceChild{
			Kind:    "ConfigMap",
			Child:   func(client.Object) (client.ObjectKey, client.Object) { return client.ObjectKey{}, nil },
			Foreign: func(client.ObjectKey) client.Object { return nil },
			Tamper:  func(client.Object) {},
			Field:   func(client.Object) string { return "" },
		}
		change(&ch)
		return ch
	}
	kind := func(children ...ConformanceChild) ConformanceKind {
		return ConformanceKind{Suite: &Suite{}, Controller: "c", New: func(string) client.Object { return nil },
			Children: children}
	}
	tests := []struct {
		name string
		kind ConformanceKind
		want []string
	}{
		{"a childless kind", kind(), nil},
		{"every case applies", kind(child(func(*ConformanceChild) {})), nil},
		{"the cases that do not apply say why", kind(child(func(ch *ConformanceChild) {
			ch.Foreign, ch.Tamper, ch.Field = nil, nil, nil
			ch.DoesNotApply = map[ConformanceCase]string{CaseConflict: "theirs", CaseChildChanged: "theirs"}
		})), nil},
		{"no why", kind(child(func(ch *ConformanceChild) {
			ch.Foreign = nil
			ch.DoesNotApply = map[ConformanceCase]string{CaseConflict: " "}
		})), []string{"ConfigMap: DoesNotApply[Conflict] must say why the case does not apply"}},
		{"no such case", kind(child(func(ch *ConformanceChild) {
			ch.DoesNotApply = map[ConformanceCase]string{"Restart": "no"}
		})), []string{`ConfigMap: DoesNotApply names "Restart", which is no case`}},
		{"Conflict applies without Foreign", kind(child(func(ch *ConformanceChild) { ch.Foreign = nil })),
			[]string{"ConfigMap: Foreign is set exactly when Conflict applies"}},
		{"Foreign for a case that does not apply", kind(child(func(ch *ConformanceChild) {
			ch.DoesNotApply = map[ConformanceCase]string{CaseConflict: "theirs"}
		})), []string{"ConfigMap: Foreign is set exactly when Conflict applies"}},
		{"ChildChanged applies without Tamper", kind(child(func(ch *ConformanceChild) { ch.Tamper, ch.Field = nil, nil })),
			[]string{"ConfigMap: Tamper and Field are set exactly when ChildChanged applies"}},
		{"Change without Changed", kind(child(func(ch *ConformanceChild) { ch.Change = func(client.Object) {} })),
			[]string{"ConfigMap: Change and Changed go together"}},
		{"two children of a kind", kind(child(func(*ConformanceChild) {}), child(func(*ConformanceChild) {})),
			[]string{"ConfigMap: two children of that Kind"}},
		{"no Child", kind(child(func(ch *ConformanceChild) { ch.Child = nil })), []string{"ConfigMap: Child is required"}},
		{"an unadapted child says why", ConformanceKind{Suite: &Suite{}, Controller: "c",
			New: func(string) client.Object { return nil }, Unadapted: []UnadaptedChild{{Child: &corev1.ConfigMap{}}}},
			[]string{"Unadapted[0]: Child and Why are required"}},
		{"no controller", ConformanceKind{Suite: &Suite{}, New: func(string) client.Object { return nil }},
			[]string{"Suite, Controller and New are required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.kind.problems(); !slices.Equal(got, tt.want) {
				t.Errorf("problems() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A reconcile that asked to run again is pending until a later reconcile
// of the same object by the same controller ends: the priority queue
// keeps one entry per object, which the last reconcile's ask (or an event,
// whose reconcile ends later) replaces.
func TestRequeuePendingUntilAReconcileEndsAfterIt(t *testing.T) {
	log := newManagerLog()
	opts := &ctrl.Options{Logger: funcr.New(func(string, string) {}, funcr.Options{Verbosity: 0})}
	log.option(opts)
	key := types.NamespacedName{Namespace: "ns", Name: "parent"}
	of := func(controller string, key types.NamespacedName) logr.Logger {
		return opts.Logger.WithValues("controller", controller, "namespace", key.Namespace, "name", key.Name)
	}
	if log.requeuePending("c", key) {
		t.Fatal("pending before any reconcile")
	}
	of("c", key).V(5).Info("Reconcile successful")
	if log.requeuePending("c", key) {
		t.Fatal("pending after a reconcile that asked for nothing")
	}
	of("c", key).V(5).Info(requeueing + "1h0m0s")
	of("c", types.NamespacedName{Namespace: "ns", Name: "other"}).V(5).Info("Reconcile successful")
	of("other-controller", key).V(5).Info("Reconcile successful")
	if !log.requeuePending("c", key) {
		t.Fatal("not pending after a reconcile that asked to run again in an hour")
	}
	of("c", key).V(5).Info(requeueing + "1ms")
	if !log.requeuePending("c", key) {
		t.Fatal("not pending after a reconcile that asked to run again in 1ms")
	}
	// An event's reconcile took the hour's entry out of the queue and
	// asked for nothing: no reconcile is due, not even the hour's.
	of("c", key).V(5).Info("Reconcile successful")
	if log.requeuePending("c", key) {
		t.Fatal("pending after the last reconcile asked for nothing")
	}
}

// A reconcile counts as started after a moment only if its "Reconciling"
// came after it: one under way then does not show the queue was drained.
func TestReconciledSinceCountsReconcilesStartedSince(t *testing.T) {
	log := newManagerLog()
	opts := &ctrl.Options{Logger: funcr.New(func(string, string) {}, funcr.Options{})}
	log.option(opts)
	key := types.NamespacedName{Namespace: "ns", Name: "parent"}
	reconcile := func(id string) logr.Logger {
		return opts.Logger.WithValues("controller", "c", "namespace", key.Namespace, "name", key.Name,
			"reconcileID", types.UID(id))
	}
	before := reconcile("before")
	before.V(5).Info("Reconciling")
	log.mu.Lock()
	since := log.started["before"].Add(time.Nanosecond)
	log.mu.Unlock()
	before.V(5).Info("Reconcile successful")
	if log.reconciledSince("c", key, since) {
		t.Fatal("a reconcile started before counts")
	}
	after := reconcile("after")
	after.V(5).Info("Reconciling")
	if log.reconciledSince("c", key, since) {
		t.Fatal("a reconcile under way counts")
	}
	after.V(5).Info("Reconcile successful")
	if !log.reconciledSince("c", key, since) {
		t.Fatal("a reconcile started since and ended does not count")
	}
	if log.reconciledSince("other", key, since) || log.reconciledSince("c", types.NamespacedName{Name: "x"}, since) {
		t.Fatal("counts for another controller or object")
	}
}
