package testutil

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// managerLog records, from a manager's log, the errors it logs and the
// reconciles that end without one, each with the values its logger
// carried: which object an entry is about is read from those values
// (controller-runtime names the request in several), not from the keys
// they are logged under.
type managerLog struct {
	mu     sync.Mutex
	logged []loggedError
	ends   []reconcileEnd
	// started holds when each reconcile under way started, by its
	// reconcileID.
	started map[types.UID]time.Time
}

// reconcileEnd is a reconcile that ended without an error: when it
// started and ended, and when it asked to run again (zero when it did
// not).
type reconcileEnd struct {
	values               []any
	started, at, requeue time.Time
}

// requeueing starts the message controller-runtime logs (at V(5)) when a
// reconcile ends asking to run again after a delay, which follows.
const requeueing = "Reconcile done, requeueing after "

// loggedError is one error a manager logged.
type loggedError struct {
	text string
	// values are the values of the logger's key-value pairs and of the
	// call's, keys left out.
	values []any
}

func newManagerLog() *managerLog { return &managerLog{started: map[types.UID]time.Time{}} }

// option makes a manager's logger record its errors and reconcile ends in
// e.
func (e *managerLog) option(o *ctrl.Options) {
	inner := o.Logger.GetSink()
	if cd, ok := inner.(logr.CallDepthLogSink); ok {
		inner = cd.WithCallDepth(1)
	}
	o.Logger = logr.New(&recordingSink{log: e, inner: inner})
}

// mark returns how many errors were logged so far.
func (e *managerLog) mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.logged)
}

// since returns the errors logged after the first n.
func (e *managerLog) since(n int) []loggedError {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.logged[n:])
}

// about returns the errors about key logged after the first n.
func (e *managerLog) about(n int, key types.NamespacedName) []string {
	var about []string
	for _, l := range e.since(n) {
		if l.about(key) {
			about = append(about, l.text)
		}
	}
	return about
}

// requeuePending tells whether controller's last reconcile of key to end
// asked to run again after a delay (a child it vouches for, a status write
// put off). controller-runtime's priority queue holds one entry per
// object: a reconcile's ask replaces an earlier one still waiting, and an
// event for the object makes it ready at once, so that the reconcile it
// brings, ending later, speaks for the queue; an ask made before that is
// no longer due.
func (e *managerLog) requeuePending(controller string, key types.NamespacedName) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	var last reconcileEnd
	for _, end := range e.ends {
		if !slices.Contains(end.values, any(controller)) || !about(end.values, key) {
			continue
		}
		if !end.at.Before(last.at) {
			last = end
		}
	}
	return !last.requeue.IsZero()
}

// reconciledSince tells whether a reconcile of key by controller that
// started at or after since ended without an error.
func (e *managerLog) reconciledSince(controller string, key types.NamespacedName, since time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.ContainsFunc(e.ends, func(end reconcileEnd) bool {
		return !end.started.Before(since) && slices.Contains(end.values, any(controller)) && about(end.values, key)
	})
}

// reconcileID is the reconcileID controller-runtime names a reconcile's
// log entries with, among values; empty when none.
func reconcileID(values []any) types.UID {
	for _, v := range values {
		if id, ok := v.(types.UID); ok {
			return id
		}
	}
	return ""
}

// about tells whether the error was logged about key.
func (l loggedError) about(key types.NamespacedName) bool { return about(l.values, key) }

// about tells whether values, a log entry's, name the object at key,
// whatever their keys (controller-runtime logs a request's namespace and
// name, and a klog.ObjectRef of it under its kind).
func about(values []any, key types.NamespacedName) bool {
	ref := key.Name
	if key.Namespace != "" {
		ref = key.Namespace + "/" + key.Name
	}
	name, namespace := false, key.Namespace == ""
	for _, v := range values {
		switch v := v.(type) {
		case string:
			name = name || v == key.Name
			namespace = namespace || v == key.Namespace
		case fmt.Stringer:
			if v.String() == ref {
				return true
			}
		}
	}
	return name && namespace
}

// recordingSink hands everything to inner and records every error logged and
// every reconcile's end, with the values of the logger it was logged
// through.
type recordingSink struct {
	log    *managerLog
	inner  logr.LogSink
	values []any
}

func (s *recordingSink) Init(logr.RuntimeInfo) {}

// Enabled is true at every level: the ends of reconciles are logged at
// V(5), below what the tests print.
func (s *recordingSink) Enabled(int) bool { return true }

func (s *recordingSink) Info(level int, msg string, keysAndValues ...any) {
	switch {
	case msg == "Reconciling":
		if id := reconcileID(s.values); id != "" {
			s.log.mu.Lock()
			s.log.started[id] = time.Now()
			s.log.mu.Unlock()
		}
	case msg == "Reconcile successful" || strings.HasPrefix(msg, requeueing):
		end := reconcileEnd{values: append(slices.Clone(s.values), valuesOf(keysAndValues)...), at: time.Now()}
		if after, err := time.ParseDuration(strings.TrimPrefix(msg, requeueing)); err == nil {
			end.requeue = end.at.Add(after)
		}
		s.log.mu.Lock()
		id := reconcileID(end.values)
		end.started = s.log.started[id]
		delete(s.log.started, id)
		s.log.ends = append(s.log.ends, end)
		s.log.mu.Unlock()
	}
	if s.inner.Enabled(level) {
		s.inner.Info(level, msg, keysAndValues...)
	}
}

func (s *recordingSink) Error(err error, msg string, keysAndValues ...any) {
	s.log.mu.Lock()
	s.log.logged = append(s.log.logged, loggedError{
		text:   fmt.Sprintf("%s: %v", msg, err),
		values: append(slices.Clone(s.values), valuesOf(keysAndValues)...),
	})
	s.log.mu.Unlock()
	s.inner.Error(err, msg, keysAndValues...)
}

func (s *recordingSink) WithValues(keysAndValues ...any) logr.LogSink {
	out := *s
	out.inner = s.inner.WithValues(keysAndValues...)
	out.values = append(slices.Clone(s.values), valuesOf(keysAndValues)...)
	return &out
}

func (s *recordingSink) WithName(name string) logr.LogSink {
	out := *s
	out.inner = s.inner.WithName(name)
	return &out
}

// valuesOf returns the values of key-value pairs.
func valuesOf(keysAndValues []any) []any {
	values := make([]any, 0, len(keysAndValues)/2)
	for i := 1; i < len(keysAndValues); i += 2 {
		values = append(values, keysAndValues[i])
	}
	return values
}
