/*
Copyright 2026.

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

package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The names of the operator's metrics (package doc).
const (
	ChildWritesTotal         = "sunstrider_operator_child_writes_total"
	ApplicationReadySeconds  = "sunstrider_operator_application_ready_seconds"
	Objects                  = "sunstrider_operator_objects"
	WebhookCertificateExpiry = "sunstrider_operator_webhook_certificate_expiry_timestamp_seconds"
	ConfigurationGeneration  = "sunstrider_operator_configuration_generation"
	AccessChecksEnforced     = "sunstrider_operator_access_checks_enforced"
)

// The actions of ChildWritesTotal.
const (
	ActionCreated  = "created"
	ActionUpdated  = "updated"
	ActionRestored = "restored"
)

var (
	childWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: ChildWritesTotal,
		Help: "Children written by the operator, by kind of child and action: created, updated " +
			"(the parent asks for something new), restored (someone else changed the child).",
	}, []string{"kind", "action"})

	applicationReady = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: ApplicationReadySeconds,
		Help: "Seconds from an Application's creation to its first Ready=True, once per Application.",
		// From a Deployment of a cached image (seconds) to a slow pull or
		// a rollout waiting for capacity (minutes).
		Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600},
	})
)

func init() {
	crmetrics.Registry.MustRegister(childWrites, applicationReady)
}

// ChildWritten counts a write of a child of kind with action (ActionCreated,
// ActionUpdated or ActionRestored).
func ChildWritten(kind, action string) {
	childWrites.WithLabelValues(kind, action).Inc()
}

// ApplicationReady is the Application controller's observer of
// ApplicationReadySeconds.
var ApplicationReady = NewFirstReady(applicationReady)

// FirstReady observes, once per object, the time from an object's creation
// to the status write that first made it Ready. It remembers the UID last
// observed under each name, so it holds one entry per live object.
type FirstReady struct {
	observer prometheus.Observer
	now      func() time.Time

	mu   sync.Mutex
	seen map[types.NamespacedName]types.UID
}

// NewFirstReady returns a FirstReady observing into o.
func NewFirstReady(o prometheus.Observer) *FirstReady {
	return &FirstReady{observer: o, now: time.Now, seen: map[types.NamespacedName]types.UID{}}
}

// Written is called after a status write of obj, whose Ready condition was
// before (nil when it had none) and is now now: the first time it turns
// True for obj's UID, the time since obj's creation is observed.
func (f *FirstReady) Written(obj client.Object, before, now []metav1.Condition) {
	if !meta.IsStatusConditionTrue(now, "Ready") || meta.IsStatusConditionTrue(before, "Ready") {
		return
	}
	key := client.ObjectKeyFromObject(obj)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen[key] == obj.GetUID() {
		return
	}
	f.seen[key] = obj.GetUID()
	f.observer.Observe(f.now().Sub(obj.GetCreationTimestamp().Time).Seconds())
}

// Forget drops what is remembered of the object named key, once it is gone.
func (f *FirstReady) Forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.seen, key)
}
