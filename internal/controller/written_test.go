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

package controller

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// cacheAt is a cache that holds one object, or none.
type cacheAt struct{ obj *corev1.ConfigMap }

func (c cacheAt) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if c.obj == nil {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	c.obj.DeepCopyInto(obj.(*corev1.ConfigMap))
	return nil
}

func (c cacheAt) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func version(uid, rv, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "o", UID: types.UID(uid), ResourceVersion: rv},
		Data:       map[string]string{"status": data},
	}
}

func TestWrittenObjectsReadsYourWritesUntilTheCacheHoldsThem(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "o"}
	tests := []struct {
		name string
		// cached is what the cache holds at the read.
		cached *corev1.ConfigMap
		// remember: a write replaced version 1 of uid "a" and returned
		// version 2.
		remember bool
		want     *corev1.ConfigMap
		wantErr  bool
		// kept tells whether the write is still remembered after the read.
		kept bool
	}{
		{name: "nothing written: the cache", cached: version("a", "1", "old"), want: version("a", "1", "old")},
		{name: "the cache holds the version the write replaced: the write", cached: version("a", "1", "old"),
			remember: true, want: version("a", "2", "new"), kept: true},
		{name: "the cache holds the write: the cache, forgotten", cached: version("a", "2", "new"),
			remember: true, want: version("a", "2", "new")},
		{name: "the cache holds a later version: the cache, forgotten", cached: version("a", "3", "later"),
			remember: true, want: version("a", "3", "later")},
		{name: "the object was replaced: the cache, forgotten", cached: version("b", "1", "other"),
			remember: true, want: version("b", "1", "other")},
		{name: "the object is gone: not found, forgotten", remember: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var w WrittenObjects
			if tt.remember {
				w.remember("1", version("a", "2", "new"))
			}
			got := &corev1.ConfigMap{}
			err := w.Get(context.Background(), cacheAt{tt.cached}, key, got)
			if tt.wantErr {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
			} else {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got).To(Equal(tt.want))
			}
			kept := 0
			if tt.kept {
				kept = 1
			}
			g.Expect(w.len()).To(Equal(kept))
			if !tt.kept {
				g.Expect(w.objects).To(BeNil(), "the map goes with its last entry, and its room with it")
			}
		})
	}
}

func TestWrittenObjectsReturnsACopy(t *testing.T) {
	g := NewWithT(t)
	var w WrittenObjects
	w.remember("1", version("a", "2", "new"))
	first := &corev1.ConfigMap{}
	g.Expect(w.Get(context.Background(), cacheAt{version("a", "1", "old")}, types.NamespacedName{Namespace: "ns", Name: "o"}, first)).To(Succeed())
	first.Data["status"] = "changed by the reconcile"
	second := &corev1.ConfigMap{}
	g.Expect(w.Get(context.Background(), cacheAt{version("a", "1", "old")}, types.NamespacedName{Namespace: "ns", Name: "o"}, second)).To(Succeed())
	g.Expect(second.Data).To(HaveKeyWithValue("status", "new"))
}

func TestWrittenObjectsPutsOffWithinOneWindowFromTheFirstDeferral(t *testing.T) {
	g := NewWithT(t)
	key := types.NamespacedName{Namespace: "ns", Name: "o"}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var w WrittenObjects
	g.Expect(w.putOff(key, time.Second, start)).To(Equal(time.Second), "the first deferral opens the window")
	g.Expect(w.putOff(key, time.Second, start.Add(300*time.Millisecond))).To(Equal(700*time.Millisecond),
		"a later change joins it")
	// The cache catching up with an earlier write keeps the window.
	g.Expect(w.Get(context.Background(), cacheAt{version("a", "5", "")}, key, &corev1.ConfigMap{})).To(Succeed())
	g.Expect(w.putOff(key, time.Second, start.Add(time.Second))).To(BeZero(), "due once the window has passed")
	g.Expect(w.putOff(key, time.Second, start.Add(2*time.Second))).To(BeZero(), "due until written")

	w.remember("5", version("a", "6", "written"))
	g.Expect(w.putOff(key, time.Second, start.Add(3*time.Second))).To(Equal(time.Second), "a write ends the window")

	g.Expect(w.Get(context.Background(), cacheAt{}, key, &corev1.ConfigMap{})).NotTo(Succeed())
	g.Expect(w.len()).To(BeZero(), "an object gone is forgotten, deferral included")
	g.Expect(w.objects).To(BeNil())
}

func TestSameConditions(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
		return metav1.Condition{Type: ConditionReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen}
	}
	stalled := metav1.Condition{Type: ConditionStalled, Status: metav1.ConditionTrue, Reason: "Blocked"}
	reconciling := metav1.Condition{Type: ConditionReconciling, Status: metav1.ConditionTrue, Reason: "RollingOut"}
	progressing := func(reason string) metav1.Condition {
		return metav1.Condition{Type: "Progressing", Status: metav1.ConditionTrue, Reason: reason}
	}
	tests := []struct {
		name string
		a, b []metav1.Condition
		want bool
	}{
		{"identical", []metav1.Condition{ready("False", "RollingOut", "0 of 1", 2)},
			[]metav1.Condition{ready("False", "RollingOut", "0 of 1", 2)}, true},
		{"only Ready's message differs", []metav1.Condition{ready("False", "RollingOut", "0 of 1", 2)},
			[]metav1.Condition{ready("False", "RollingOut", "1 of 1", 2)}, true},
		{"a mirrored condition's reason differs",
			[]metav1.Condition{ready("True", "Ready", "", 2), progressing("ReplicaSetUpdated")},
			[]metav1.Condition{ready("True", "Ready", "", 2), progressing("NewReplicaSetAvailable")}, true},
		{"Ready's status differs", []metav1.Condition{ready("False", "RollingOut", "", 2)},
			[]metav1.Condition{ready("True", "RollingOut", "", 2)}, false},
		{"Ready's reason differs", []metav1.Condition{ready("False", "RollingOut", "", 2)},
			[]metav1.Condition{ready("False", "DeploymentUnavailable", "", 2)}, false},
		{"a new generation", []metav1.Condition{ready("True", "Ready", "", 2)},
			[]metav1.Condition{ready("True", "Ready", "", 3)}, false},
		{"Stalled added", []metav1.Condition{ready("True", "Ready", "", 2)},
			[]metav1.Condition{ready("True", "Ready", "", 2), stalled}, false},
		{"Reconciling removed", []metav1.Condition{ready("True", "Ready", "", 2), reconciling},
			[]metav1.Condition{ready("True", "Ready", "", 2)}, false},
		{"none before", nil, []metav1.Condition{ready("True", "Ready", "", 2)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(sameConditions(tt.a, tt.b)).To(Equal(tt.want))
		})
	}
}

// TestStatusWriterPutsOffWritesThatChangeNoCondition: a write of counters
// alone is put off without a request (the writer has no client: a request
// would panic); one that changes a condition is not put off.
func TestStatusWriterPutsOffWritesThatChangeNoCondition(t *testing.T) {
	g := NewWithT(t)
	conditions := func(o client.Object) []metav1.Condition {
		data := o.(*corev1.ConfigMap).Data
		cs := make([]metav1.Condition, 0, len(data))
		for t, s := range data {
			cs = append(cs, metav1.Condition{Type: t, Status: metav1.ConditionStatus(s)})
		}
		return cs
	}
	// The ConfigMap's "status": its data (the conditions) and labels (the
	// counters).
	status := func(o client.Object) any {
		cm := o.(*corev1.ConfigMap)
		return []any{cm.Data, cm.Labels}
	}
	w := StatusWriter{Status: status, Conditions: conditions, Written: &WrittenObjects{}, Batch: time.Second}
	orig := version("a", "1", "True")
	orig.Data = map[string]string{ConditionReady: "True"}
	counters := orig.DeepCopy()
	counters.Labels = map[string]string{"replicas": "2"}
	written, wait, err := w.Write(context.Background(), orig, counters)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(written).To(BeFalse())
	g.Expect(wait).To(BeNumerically("~", time.Second, 100*time.Millisecond))

	changed := orig.DeepCopy()
	changed.Data[ConditionReady] = "False"
	g.Expect(func() { _, _, _ = w.Write(context.Background(), orig, changed) }).To(Panic(),
		"a change of a condition goes to the (absent) client at once")
}

func TestSkipOwnWritesDropsOnlyTheEventOfTheLastWrite(t *testing.T) {
	tests := []struct {
		name string
		// event is the new version of the update event; the write replaced
		// version 1 of uid "a" and returned version 2.
		event *corev1.ConfigMap
		// deferred: a write was put off since (StatusWriter.Batch).
		deferred bool
		dropped  bool
		// kept tells whether anything of the object is remembered after
		// the event.
		kept bool
	}{
		{name: "the write's own version: dropped, forgotten", event: version("a", "2", "new"), dropped: true},
		{name: "the write's own version with a deferral under way: dropped, the deferral kept",
			event: version("a", "2", "new"), deferred: true, dropped: true, kept: true},
		{name: "the version the write replaced: passed", event: version("a", "1", "old"), kept: true},
		{name: "a later version (someone else's write): passed", event: version("a", "3", "other"), kept: true},
		{name: "another object of the name: passed", event: version("b", "2", "new"), kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var w WrittenObjects
			w.remember("1", version("a", "2", "new"))
			if tt.deferred {
				w.putOff(types.NamespacedName{Namespace: "ns", Name: "o"}, time.Second, time.Now())
			}
			p := w.SkipOwnWrites()
			g.Expect(p.Update(event.UpdateEvent{ObjectOld: version("a", "1", "old"), ObjectNew: tt.event})).To(Equal(!tt.dropped))
			g.Expect(w.len()).To(Equal(map[bool]int{true: 1}[tt.kept]))
			g.Expect(w.skipped).To(Equal(map[bool]int{true: 1}[tt.dropped]))
			g.Expect(w.objects[types.NamespacedName{Namespace: "ns", Name: "o"}].obj != nil).To(Equal(!tt.dropped))
			// Events of other kinds pass.
			g.Expect(p.Create(event.CreateEvent{Object: tt.event})).To(BeTrue())
			g.Expect(p.Delete(event.DeleteEvent{Object: tt.event})).To(BeTrue())
		})
	}
	g := NewWithT(t)
	var none WrittenObjects
	g.Expect(none.SkipOwnWrites().Update(event.UpdateEvent{ObjectOld: version("a", "1", "old"), ObjectNew: version("a", "2", "new")})).
		To(BeTrue(), "nothing written: every event passes")
}

// The watch event of a write may come before the API server's answer: the
// update from the version the write in flight replaces is its own (only
// one write replaces a version; another's would have the write refused).
func TestSkipOwnWritesDropsTheEventOfTheWriteInFlight(t *testing.T) {
	tests := []struct {
		name    string
		old     *corev1.ConfigMap
		new     *corev1.ConfigMap
		dropped bool
	}{
		{name: "from the version it replaces: dropped", old: version("a", "1", "old"), new: version("a", "2", "new"), dropped: true},
		{name: "from an older version: passed", old: version("a", "0", "older"), new: version("a", "1", "old")},
		{name: "another object of the name: passed", old: version("b", "1", "old"), new: version("b", "2", "new")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var w WrittenObjects
			w.writing("1", version("a", "1", "old"))
			g.Expect(w.SkipOwnWrites().Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new})).To(Equal(!tt.dropped))
			g.Expect(w.skipped).To(Equal(map[bool]int{true: 1}[tt.dropped]))

			// The answer comes: the next read gets the write until the
			// cache holds it, and the write's event, if it passed, is
			// not dropped twice.
			w.remember("1", version("a", "2", "new"))
			got := &corev1.ConfigMap{}
			g.Expect(w.Get(context.Background(), cacheAt{obj: version("a", "1", "old")}, types.NamespacedName{Namespace: "ns", Name: "o"}, got)).To(Succeed())
			g.Expect(got.ResourceVersion).To(Equal("2"))
		})
	}
	g := NewWithT(t)
	var w WrittenObjects
	w.writing("1", version("a", "1", "old"))
	w.notWritten(version("a", "1", "old"))
	g.Expect(w.len()).To(BeZero(), "a write that wrote nothing is forgotten")
	g.Expect(w.SkipOwnWrites().Update(event.UpdateEvent{ObjectOld: version("a", "1", "old"), ObjectNew: version("a", "2", "new")})).
		To(BeTrue(), "and its version's next update passes")
}

func TestSkipOwnWritesPassesEverythingWhenNothingIsWritten(t *testing.T) {
	g := NewWithT(t)
	var none WrittenObjects
	g.Expect(none.SkipOwnWrites().Update(event.UpdateEvent{ObjectOld: version("a", "1", "old"), ObjectNew: version("a", "2", "new")})).
		To(BeTrue(), "nothing written: every event passes")
}
