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

package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunmeta "sunstrider.cn/operator/api/meta"
)

// StaleRetry is how soon an object whose status write found its cached
// copy stale is reconciled again. The request goes back into the queue at
// its own priority (controller-runtime keeps a requeued request's priority
// when the result names none), and the newer version's watch event, queued
// meanwhile at the default priority, merges into it at the higher one: a
// parent woken ahead of the queue (ReadyPriority) keeps its place after a
// conflict instead of waiting behind the backlog for that event.
const StaleRetry = 100 * time.Millisecond

// PatchStatus writes obj's status as a merge patch computed from orig, the
// cached copy it was derived from, and reports whether it wrote, or found
// orig stale; status returns an object's status. The patch carries orig's
// resourceVersion: a diff from a stale copy would otherwise leave a mix of
// a newer write and this one. A stale copy is not written (the caller
// reconciles again, StaleRetry), and neither is an object deleted
// meanwhile, which needs no status.
func PatchStatus(ctx context.Context, c client.StatusClient, orig, obj client.Object, status func(client.Object) any) (written, stale bool, err error) {
	patch, err := statusMergeFrom(orig, status)
	if err != nil {
		return false, false, err
	}
	err = c.Status().Patch(ctx, obj, patch)
	switch {
	case err == nil:
		return true, false, nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(1).Info("Cached object is stale, reconciling again", "after", StaleRetry)
		return false, true, nil
	case apierrors.IsNotFound(err):
		return false, false, nil
	}
	return false, false, fmt.Errorf("patching status of %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
}

// statusMergePatch is the JSON merge patch from one status of an object to
// another, with a resourceVersion as its precondition: what controller-
// runtime's MergeFromWithOptimisticLock makes of two copies that differ in
// their status only (a status write changes nothing else), without copying
// and encoding the copies' spec and metadata to find that out (a share of
// the manager's CPU in a burst of Applications that its profile showed).
// The difference itself is the json-patch library's, as in
// controller-runtime.
type statusMergePatch struct {
	resourceVersion string
	// from is the status the patch starts from, encoded.
	from []byte
	// status returns an object's status.
	status func(client.Object) any
}

// statusMergeFrom returns the merge patch from orig's status, guarded by
// orig's resourceVersion.
func statusMergeFrom(orig client.Object, status func(client.Object) any) (client.Patch, error) {
	from, err := json.Marshal(status(orig))
	if err != nil {
		return nil, fmt.Errorf("encoding the status of %T %s: %w", orig, client.ObjectKeyFromObject(orig), err)
	}
	return statusMergePatch{resourceVersion: orig.GetResourceVersion(), from: from, status: status}, nil
}

func (p statusMergePatch) Type() types.PatchType { return types.MergePatchType }

// Data is the patch that turns the status it starts from into obj's.
func (p statusMergePatch) Data(obj client.Object) ([]byte, error) {
	to, err := json.Marshal(p.status(obj))
	if err != nil {
		return nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(p.from, to)
	if err != nil {
		return nil, err
	}
	if string(diff) == "{}" {
		diff = nil // the status as it was: the precondition alone
	}
	type metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	}
	return json.Marshal(struct {
		Metadata metadata        `json:"metadata"`
		Status   json.RawMessage `json:"status,omitempty"`
	}{metadata{p.resourceVersion}, diff})
}

// StatusWriter is the one status path of every kind: compare, patch once,
// and tell a person when the object became stuck.
type StatusWriter struct {
	// Client writes the status subresource.
	Client client.StatusClient
	// Recorder records the Warning of a transition into Stalled.
	Recorder events.EventRecorder
	// Status returns the status of an object of the kind, the only part a
	// reconcile changes; when nil, its Status field (every kind's).
	Status func(client.Object) any
	// Conditions returns the status conditions of an object of the kind;
	// when nil, its GetConditions (sunmeta.ObjectWithConditions).
	Conditions func(client.Object) []metav1.Condition
	// Written, when set, remembers each write for the controller's next
	// read (WrittenObjects.Get) until its cache holds it.
	Written *WrittenObjects
	// Batch, when set (with Written), puts off a write that leaves Ready,
	// Reconciling and Stalled as they were (a workload's counters, a
	// mirrored condition, a message) for up to Batch after the first one:
	// the steps of a rollout make one write, or join the write of the
	// transition that ends it. What a person or a tool waits on (Ready,
	// Stalled, a new generation) is written at once.
	Batch time.Duration
}

// Write writes obj's status when it differs from orig's, the cached copy
// it was computed from (a reconcile changes nothing else), and reports
// whether it wrote; when it put the write off (Batch) or found orig stale
// (StaleRetry), wait tells when to reconcile again. After a write that
// makes obj Stalled, or changes why it is, it records a Warning event with
// Stalled's reason and message: once per transition, since orig was
// current (a stale orig is not written).
func (w StatusWriter) Write(ctx context.Context, orig, obj client.Object) (written bool, wait time.Duration, err error) {
	if w.Status == nil {
		w.Status = statusField
	}
	if w.Conditions == nil {
		w.Conditions = func(o client.Object) []metav1.Condition { return o.(sunmeta.ObjectWithConditions).GetConditions() }
	}
	if equality.Semantic.DeepEqual(w.Status(orig), w.Status(obj)) {
		return false, 0, nil
	}
	if w.Batch > 0 && w.Written != nil && sameConditions(w.Conditions(orig), w.Conditions(obj)) {
		if wait = w.Written.putOff(client.ObjectKeyFromObject(obj), w.Batch, time.Now()); wait > 0 {
			ctrl.LoggerFrom(ctx).V(1).Info("Putting off a status write that changes no condition", "for", wait)
			return false, wait, nil
		}
	}
	if w.Written != nil {
		w.Written.writing(orig.GetResourceVersion(), orig)
	}
	written, stale, err := PatchStatus(ctx, w.Client, orig, obj, w.Status)
	if w.Written != nil && !written {
		w.Written.notWritten(orig)
	}
	switch {
	case stale:
		return false, StaleRetry, nil
	case err != nil || !written:
		return written, 0, err
	}
	if w.Written != nil {
		w.Written.remember(orig.GetResourceVersion(), obj)
	}
	now := meta.FindStatusCondition(w.Conditions(obj), ConditionStalled)
	if now == nil || now.Status != metav1.ConditionTrue {
		return true, 0, nil
	}
	before := meta.FindStatusCondition(w.Conditions(orig), ConditionStalled)
	if before != nil && before.Status == now.Status && before.Reason == now.Reason && before.Message == now.Message {
		return true, 0, nil
	}
	w.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
	return true, 0, nil
}

// sameConditions tells whether a and b agree on what tools and people wait
// on: the Ready, Reconciling and Stalled conditions (Flux's and kstatus'),
// by status, reason and observedGeneration. The other conditions mirror a
// child's (a Deployment's Available and Progressing) and change at every
// step of a rollout; their changes ride with the next write.
func sameConditions(a, b []metav1.Condition) bool {
	for _, t := range []string{ConditionReady, ConditionReconciling, ConditionStalled} {
		x, y := meta.FindStatusCondition(a, t), meta.FindStatusCondition(b, t)
		switch {
		case x == nil && y == nil:
		case x == nil || y == nil:
			return false
		case x.Status != y.Status || x.Reason != y.Reason || x.ObservedGeneration != y.ObservedGeneration:
			return false
		}
	}
	return true
}

// statusField returns a pointer to obj's Status field: every kind's API
// type has one, and a reconcile changes nothing else.
func statusField(obj client.Object) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Status").Addr().Interface()
}
