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

// Package settings holds the operator's live settings: what the
// OperatorConfiguration (config.sunstrider.cn/v1alpha1) says, over the
// manager's flags and the built-in defaults. Reconcilers read them from a
// Holder at every reconcile; the OperatorConfiguration controller stores
// them.
package settings

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/event"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// DefaultConflictRecheckInterval is the conflict recheck interval when
// neither the OperatorConfiguration nor a flag sets one: how often a parent
// blocked by a foreign object in its child's place (Ready=False,
// ResourceConflict) looks again. The manager caches only the children it
// labelled, so the foreign object's removal wakes nobody.
const DefaultConflictRecheckInterval = 30 * time.Second

// DefaultLogLevel is the log level when neither the OperatorConfiguration
// nor --zap-log-level sets one.
const DefaultLogLevel = "info"

// DefaultChildAccess is the child access mode when the
// OperatorConfiguration sets none: the requester's own rights decide.
const DefaultChildAccess = configv1alpha1.ChildAccessRequester

// DefaultGuestbookResources returns the built-in compute resources of a
// Guestbook instance.
func DefaultGuestbookResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("32Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("64Mi"),
		},
	}
}

// Controllers says which controllers run.
type Controllers struct {
	Application, MyCustomResource, Guestbook, Drink bool
}

// AllControllers runs every controller.
var AllControllers = Controllers{Application: true, MyCustomResource: true, Guestbook: true, Drink: true}

// Settings is one complete set of values, every field filled in. A
// *Settings obtained from a Holder is shared: never modify it.
type Settings struct {
	// Live: the reconcilers read them at every reconcile.
	GuestbookImage          string
	GuestbookResources      corev1.ResourceRequirements
	ConflictRecheckInterval time.Duration
	LogLevel                string
	// ChildAccess is read by the admission webhooks at every create and
	// update: configv1alpha1.ChildAccessRequester or ChildAccessDelegated.
	ChildAccess configv1alpha1.ChildAccess
	// GuestbookSystemNamespaces are the kube-* namespaces Guestbooks may
	// use, sorted: read by the Guestbook webhook at every create and
	// update, and by the Guestbook controller at every reconcile.
	GuestbookSystemNamespaces []string

	// At start only: a change needs a restart.
	Controllers     Controllers
	WatchNamespaces []string
}

// RestartFields names the fields of the spec that take effect only when the
// operator starts.
var RestartFields = []string{"spec.controllers", "spec.watchNamespaces"}

// RestartNeeded returns the fields of RestartFields whose value in want
// differs from the one the process started with.
func RestartNeeded(started, want *Settings) []string {
	var fields []string
	if started.Controllers != want.Controllers {
		fields = append(fields, "spec.controllers")
	}
	if !sameSet(started.WatchNamespaces, want.WatchNamespaces) {
		fields = append(fields, "spec.watchNamespaces")
	}
	return fields
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// Holder is the live Settings, safe for concurrent use: Load is a single
// atomic read, so a reconcile sees one consistent set.
type Holder struct {
	current atomic.Pointer[Settings]
	level   zap.AtomicLevel

	mu          sync.Mutex
	subscribers []subscriber
}

type subscriber struct {
	changed func(old, new *Settings) bool
	events  chan event.GenericEvent
}

// NewHolder returns a Holder holding initial, which also sets level (the
// AtomicLevel of the process's logger).
func NewHolder(initial Settings, level zap.AtomicLevel) *Holder {
	h := &Holder{level: level}
	h.Store(initial)
	return h
}

// Load returns the settings in effect; never nil. Do not modify them.
func (h *Holder) Load() *Settings { return h.current.Load() }

// Store puts s in effect: the log level at once, the rest for the next
// reconciles. Subscribers whose change function reports a change get an
// event.
func (h *Holder) Store(s Settings) {
	s.WatchNamespaces = slices.Clone(s.WatchNamespaces)
	s.GuestbookSystemNamespaces = slices.Clone(s.GuestbookSystemNamespaces)
	old := h.current.Swap(&s)
	if lvl, err := ParseLevel(s.LogLevel); err == nil {
		h.level.SetLevel(lvl)
	}
	if old == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sub := range h.subscribers {
		if !sub.changed(old, &s) {
			continue
		}
		// One pending event is enough: the reconcile it causes reads the
		// newest settings.
		select {
		case sub.events <- event.GenericEvent{}:
		default:
		}
	}
}

// Subscribe returns a channel that receives an event whenever Store changes
// the settings in a way changed reports, for a controller to reconcile what
// they affect (source.Channel). Events coalesce: a slow reader sees one.
func (h *Holder) Subscribe(changed func(old, new *Settings) bool) <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subscribers = append(h.subscribers, subscriber{changed: changed, events: ch})
	return ch
}

// GuestbookChanged reports a change of what a Guestbook's workload is made
// from (image, resources), of the system namespaces it may use, or of the
// conflict recheck interval.
func GuestbookChanged(old, new *Settings) bool {
	return old.GuestbookImage != new.GuestbookImage ||
		!equality.Semantic.DeepEqual(old.GuestbookResources, new.GuestbookResources) ||
		!slices.Equal(old.GuestbookSystemNamespaces, new.GuestbookSystemNamespaces) ||
		old.ConflictRecheckInterval != new.ConflictRecheckInterval
}

// RecheckChanged reports a change of the conflict recheck interval.
func RecheckChanged(old, new *Settings) bool {
	return old.ConflictRecheckInterval != new.ConflictRecheckInterval
}
