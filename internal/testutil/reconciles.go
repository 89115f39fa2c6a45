package testutil

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ReconcileLog counts, per controller and object, the reconciles a manager
// finished without error. A test that asserts that nothing happened (no
// write, an object left alone) first shows with it that the controller did
// look at its objects: otherwise the assertion would pass just as well
// before any reconcile.
//
// It reads the manager's log: controller-runtime logs the end of every
// reconcile at V(5) ("Reconcile successful", "Reconcile done, requeueing…")
// with the controller's name and the object's namespace and name. Should
// those messages change, every wait on the log fails: it never passes
// vacuously.
type ReconcileLog struct {
	mu     sync.Mutex
	counts map[reconciled]int
	// started holds the controllers whose workers started: their watches
	// had all synced ("Starting workers").
	started map[string]bool
}

type reconciled struct {
	controller string
	key        types.NamespacedName
}

// ReconcileMark is a copy of a ReconcileLog's counts at one moment.
type ReconcileMark map[reconciled]int

// NewReconcileLog returns an empty log.
func NewReconcileLog() *ReconcileLog {
	return &ReconcileLog{counts: map[reconciled]int{}, started: map[string]bool{}}
}

// WorkersStarted tells whether controller has started its workers, which
// it does once every watch it was built with has synced.
func (l *ReconcileLog) WorkersStarted(controller string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started[controller]
}

// Logger returns a logger that passes everything on to base and counts the
// reconciles it is told about.
func (l *ReconcileLog) Logger(base logr.Logger) logr.Logger {
	inner := base.GetSink()
	if cd, ok := inner.(logr.CallDepthLogSink); ok {
		// The wrapper adds a frame between the caller and inner.
		inner = cd.WithCallDepth(1)
	}
	return logr.New(&reconcileSink{log: l, inner: inner})
}

// Count returns how many reconciles of key by controller finished.
func (l *ReconcileLog) Count(controller string, key client.ObjectKey) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[reconciled{controller, key}]
}

// Total returns how many reconciles controller finished, of any object.
func (l *ReconcileLog) Total(controller string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for r, c := range l.counts {
		if r.controller == controller {
			n += c
		}
	}
	return n
}

// Mark returns the counts as they are now.
func (l *ReconcileLog) Mark() ReconcileMark {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts)
}

// NotReconciledSince returns the keys controller has not finished a
// reconcile of since mark (a nil mark: since the manager started), for use
// in an Eventually: `Should(BeEmpty())`.
func (l *ReconcileLog) NotReconciledSince(mark ReconcileMark, controller string, keys ...client.ObjectKey) []client.ObjectKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pending []client.ObjectKey
	for _, key := range keys {
		r := reconciled{controller, key}
		if l.counts[r] <= mark[r] {
			pending = append(pending, key)
		}
	}
	return pending
}

func (l *ReconcileLog) record(controller string, key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[reconciled{controller, key}]++
}

// isReconcileEnd tells whether msg is one controller-runtime logs when a
// reconcile returns without error.
func isReconcileEnd(msg string) bool {
	const after = "Reconcile done, requeueing after "
	return msg == "Reconcile successful" || msg == "Reconcile done, requeueing" ||
		(strings.HasPrefix(msg, after) && len(msg) > len(after))
}

// reconcileSink is a logr.LogSink that hands everything to inner and counts
// the ends of reconciles. It is enabled at every level: the ends are logged
// at V(5), below what the tests print.
type reconcileSink struct {
	log   *ReconcileLog
	inner logr.LogSink
	// controller, namespace and name are the values the controller's
	// logger carries for the request it reconciles.
	controller, namespace, name string
	named                       bool
}

// Init does nothing: inner was initialised by the logger it came from.
func (s *reconcileSink) Init(logr.RuntimeInfo) {}

func (s *reconcileSink) Enabled(int) bool { return true }

func (s *reconcileSink) Info(level int, msg string, keysAndValues ...any) {
	if s.named && s.controller != "" && isReconcileEnd(msg) {
		s.log.record(s.controller, types.NamespacedName{Namespace: s.namespace, Name: s.name})
	}
	if msg == "Starting workers" && s.controller != "" {
		s.log.mu.Lock()
		s.log.started[s.controller] = true
		s.log.mu.Unlock()
	}
	if s.inner.Enabled(level) {
		s.inner.Info(level, msg, keysAndValues...)
	}
}

func (s *reconcileSink) Error(err error, msg string, keysAndValues ...any) {
	s.inner.Error(err, msg, keysAndValues...)
}

func (s *reconcileSink) WithValues(keysAndValues ...any) logr.LogSink {
	out := *s
	out.inner = s.inner.WithValues(keysAndValues...)
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		value, ok := keysAndValues[i+1].(string)
		if !ok {
			continue
		}
		switch keysAndValues[i] {
		case "controller":
			out.controller = value
		case "namespace":
			out.namespace = value
		case "name":
			out.name, out.named = value, true
		}
	}
	return &out
}

func (s *reconcileSink) WithName(name string) logr.LogSink {
	out := *s
	out.inner = s.inner.WithName(name)
	return &out
}

// ReconcileTotal returns controller-runtime's controller_runtime_reconcile_total
// of controller in this process (every manager started here adds to it),
// summed over the results that are no error.
func ReconcileTotal(controller string) (float64, error) {
	total, found, err := counterSum("controller_runtime_reconcile_total", func(labels map[string]string) bool {
		return labels["controller"] == controller && labels["result"] != "error"
	})
	if err == nil && !found {
		err = fmt.Errorf("no controller_runtime_reconcile_total for controller %q", controller)
	}
	return total, err
}

// ReconcileErrorTotal returns controller-runtime's
// controller_runtime_reconcile_errors_total of controller in this process
// (every manager started here adds to it): every reconcile that returned
// an error, whatever was logged about it.
func ReconcileErrorTotal(controller string) (float64, error) {
	total, found, err := counterSum("controller_runtime_reconcile_errors_total", func(labels map[string]string) bool {
		return labels["controller"] == controller
	})
	if err == nil && !found {
		err = fmt.Errorf("no controller_runtime_reconcile_errors_total for controller %q", controller)
	}
	return total, err
}

// WebhookRequestTotal returns controller-runtime's
// controller_runtime_webhook_requests_total for the webhook served at path
// in this process, summed over the response codes; 0 before its first
// request (the series exists only from then on).
func WebhookRequestTotal(path string) (float64, error) {
	total, _, err := counterSum("controller_runtime_webhook_requests_total", func(labels map[string]string) bool {
		return labels["webhook"] == path
	})
	return total, err
}

// counterSum sums the series of the counter name in controller-runtime's
// registry whose labels match, and tells whether there was any.
func counterSum(name string, match func(labels map[string]string) bool) (total float64, found bool, err error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, false, err
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if match(labels) {
				total += m.GetCounter().GetValue()
				found = true
			}
		}
	}
	return total, found, nil
}

// Nudge changes an annotation of obj that no controller reads: an event
// for obj's watchers that asks for nothing, after which a controller at
// steady state should reconcile obj and write nothing.
func Nudge(ctx context.Context, c client.Client, obj client.Object) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.sunstrider.cn/nudge":%q}}}`,
		time.Now().Format(time.RFC3339Nano))
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("nudging %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}
