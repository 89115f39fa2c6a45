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
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// WrittenObjects lets a controller read its own status writes before the
// manager's cache holds them. It remembers, per object, what the last
// status write returned and the version that write replaced, until a read
// finds the cache past that version.
//
// Without it, a reconcile that follows a status write at once (a child's
// event handled before the object's own) computes the status from the
// version the write replaced, and its patch, guarded by that version, is
// refused as stale: a request and a reconcile wasted, and the status late
// by a trip through the queue at the default priority, more than once per
// spec change in a steady run of them.
//
// Hand-written: controller-runtime's cache has no read-your-writes, and
// its client returns the written object to the caller only.
type WrittenObjects struct {
	mu      sync.Mutex
	objects map[types.NamespacedName]writtenObject
	// skipped counts the events SkipOwnWrites dropped.
	skipped int
}

type writtenObject struct {
	// replaced is the resourceVersion the write replaced.
	replaced string
	// obj is the object as the write returned it; nil once the cache holds
	// it.
	obj client.Object
	// deferredSince is when a status write was first put off since the
	// last one (StatusWriter.Batch); zero when none is.
	deferredSince time.Time
	// writing is the resourceVersion a status write in flight replaces,
	// and writingUID the object's UID; empty when none is in flight.
	writing    string
	writingUID types.UID
}

// Get reads the object at key into obj from c (the manager's cache). When
// the copy read is the version a remembered status write replaced, obj
// becomes what that write returned; any other copy is newer, and the
// write is forgotten (as it is when the object is gone).
func (w *WrittenObjects) Get(ctx context.Context, c client.Reader, key types.NamespacedName, obj client.Object) error {
	err := c.Get(ctx, key, obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.objects[key]
	switch {
	case !ok:
		return err
	case err != nil:
		if apierrors.IsNotFound(err) {
			w.forget(key)
		}
		return err
	case last.obj == nil:
		return nil
	case obj.GetUID() != last.obj.GetUID() || obj.GetResourceVersion() != last.replaced:
		w.caughtUp(key, last)
		return nil
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(last.obj.DeepCopyObject()).Elem())
	return nil
}

// caughtUp forgets the write of last, keeping a deferral under way.
func (w *WrittenObjects) caughtUp(key types.NamespacedName, last writtenObject) {
	if last.deferredSince.IsZero() {
		w.forget(key)
		return
	}
	last.obj = nil
	w.objects[key] = last
}

// forget drops what is remembered of key. The map is dropped with its
// last entry: a Go map keeps the room of the most entries it ever held,
// and a burst of writes to thousands of objects would leave that room in
// the heap for good.
func (w *WrittenObjects) forget(key types.NamespacedName) {
	delete(w.objects, key)
	if len(w.objects) == 0 {
		w.objects = nil
	}
}

// putOff tells how long a status write of key may still be put off, the
// first one starting a window of batch at now; 0 when it is due.
func (w *WrittenObjects) putOff(key types.NamespacedName, batch time.Duration, now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.objects == nil {
		w.objects = map[types.NamespacedName]writtenObject{}
	}
	last := w.objects[key]
	if last.deferredSince.IsZero() {
		last.deferredSince = now
		w.objects[key] = last
		return batch
	}
	return max(0, batch-now.Sub(last.deferredSince))
}

// writing records that a status write of obj, replacing its version
// replaced, is in flight: its watch event may reach SkipOwnWrites before
// the API server's answer reaches the writer (remember).
func (w *WrittenObjects) writing(replaced string, obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.objects == nil {
		w.objects = map[types.NamespacedName]writtenObject{}
	}
	key := client.ObjectKeyFromObject(obj)
	last := w.objects[key]
	last.writing, last.writingUID = replaced, obj.GetUID()
	w.objects[key] = last
}

// notWritten records that the write in flight of obj (writing) wrote
// nothing.
func (w *WrittenObjects) notWritten(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	last, ok := w.objects[key]
	if !ok {
		return
	}
	last.writing, last.writingUID = "", ""
	if last.obj == nil && last.deferredSince.IsZero() {
		w.forget(key)
		return
	}
	w.objects[key] = last
}

// remember records that a status write replaced the version replaced of
// obj and returned obj.
func (w *WrittenObjects) remember(replaced string, obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.objects == nil {
		w.objects = map[types.NamespacedName]writtenObject{}
	}
	w.objects[client.ObjectKeyFromObject(obj)] = writtenObject{replaced: replaced, obj: obj.DeepCopyObject().(client.Object)}
}

// SkipOwnWrites is the predicate of a controller's own kind (For) that
// drops the watch event of its own status write: the update to the very
// version the last write returned. The reconcile it would bring reads what
// that write's reconcile wrote from what it observed, and writes nothing;
// a change of a child since brings its own event, and one made while that
// reconcile ran has it run again (the queue marks its key dirty). A write
// by anyone else, or a later one, is another version and still brings a
// reconcile, which puts the status right. The write is forgotten when its
// event is dropped: the cache holds it.
//
// The event's answer and the writer's race: when the event comes while
// the write is still in flight (writing), it is the write's own when it
// replaces the version the write replaces. Only one write replaces a
// version: were it someone else's, the write in flight, guarded by that
// version, is refused as stale and reconciles again (StaleRetry).
//
// The event passes when the write is no longer remembered by then: a
// reconcile read the cache after it took the write in and before the
// event reached the predicate (the informer updates its store first).
// That reconcile then writes nothing, as before.
func (w *WrittenObjects) SkipOwnWrites() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !w.ownWrite(e.ObjectOld, e.ObjectNew) }}
}

// ownWrite tells whether the update from old to obj is the last status
// write of its key, returned or in flight, and then forgets that write.
func (w *WrittenObjects) ownWrite(old, obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	last, ok := w.objects[key]
	switch {
	case !ok:
		return false
	case last.writing != "" && last.writingUID == obj.GetUID() && old.GetResourceVersion() == last.writing:
		last.writing, last.writingUID = "", ""
		w.objects[key] = last
	case last.obj == nil || last.obj.GetUID() != obj.GetUID() || last.obj.GetResourceVersion() != obj.GetResourceVersion():
		return false
	default:
		w.caughtUp(key, last)
	}
	w.skipped++
	return true
}

// len is the number of objects with a write or a deferral remembered: a
// write is forgotten at its own watch event (SkipOwnWrites) or by a read
// that finds the cache past it, a deferral by the write that ends it.
func (w *WrittenObjects) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.objects)
}
