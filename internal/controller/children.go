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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
)

// Children is the one outcome recorder of every kind: a reconcile reads and
// writes its parent's children through it (Observe, Write, Ensure), and it
// classifies each answer of the API server once (Policy). The kind's
// computeStatus reads what it recorded (NotReady), and the reconcile ends
// with RecordEvents and Result.
type Children struct {
	// Applier is the shared child path.
	Applier *apply.Applier
	// Parent is the object whose children these are; Kind is its kind
	// ("Application"), for messages.
	Parent client.Object
	Kind   string

	// Created and Updated name the kinds of the children written, Deleted
	// the children deleted ("Service ns/name"), with why.
	Created, Updated []string
	Deleted          []string
	// Conflicts name the objects in a child's place the parent does not
	// control, with their controller: "Deployment ns/name (it has no
	// controller)".
	Conflicts []string
	// Refusal is the first write the API server refused.
	Refusal *Refusal
	// Stale is true when a child changed between the read and the write.
	Stale bool
}

// NewChildren returns the recorder of one reconcile of parent, of kind;
// memory is the controller's memory of its children (apply.Memory).
func NewChildren(c client.Client, apiReader client.Reader, memory *apply.Memory, parent client.Object, kind string) *Children {
	applier := &apply.Applier{Client: c, APIReader: apiReader, Created: &memory.Created, Synced: &memory.Synced}
	return &Children{Applier: applier, Parent: parent, Kind: kind}
}

// Refusal is a child's write the API server refused.
type Refusal struct {
	// Kind is the child's kind.
	Kind string
	// Err is the API server's answer.
	Err error
}

// Answer is the refusal's class: AnswerInvalid or AnswerRefused.
func (r *Refusal) Answer() Answer { return AnswerOf(r.Err) }

// Message says it for a person, in the API server's words.
func (r *Refusal) Message() string { return apply.RefusalMessage(r.Kind, r.Err) }

// Observe reads the child at key into live (an empty object of the child's
// type) and reports whether it exists and is the parent's. An object of
// that name the parent does not control is recorded as a conflict:
// conflict is true, found false, and the child must not be written. err
// only when the API server did not answer.
func (c *Children) Observe(ctx context.Context, key client.ObjectKey, live client.Object) (found, conflict bool, err error) {
	found, name, err := c.Applier.Observe(ctx, c.Parent.GetUID(), key, live)
	switch {
	case err != nil:
		return false, false, err
	case name != "":
		c.Conflicts = append(c.Conflicts, fmt.Sprintf("%s (%s)", name, controllerOf(live)))
		return false, true, nil
	}
	return found, false, nil
}

// Write makes the child desired (typed, with its kind, labels and owner
// reference set) exist as desired, given live, the child Observe found
// (nil when absent), and returns the child as last seen: after a refused
// write, the child as it was, so that a running workload stays served and
// reported beside the refusal; nil when there is none. err only when the
// API server did not answer.
func (c *Children) Write(ctx context.Context, desired, live client.Object) (client.Object, error) {
	out, err := c.Applier.Write(ctx, desired, live)
	if err != nil {
		return nil, err
	}
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	switch {
	case out.Conflict != "":
		c.Conflicts = append(c.Conflicts, fmt.Sprintf("%s (%s)", out.Conflict, controllerOf(out.Foreign)))
	case out.Stale:
		c.Stale = true
	case out.Rejected != nil:
		c.refuse(kind, out.Rejected)
	case out.Action == apply.Created:
		c.Created = append(c.Created, kind)
	case out.Action == apply.Updated:
		c.Updated = append(c.Updated, kind)
	}
	return out.Live, nil
}

// Ensure is Observe, then Write when the child is not someone else's: it
// returns the child as last seen, nil when absent or in conflict.
func (c *Children) Ensure(ctx context.Context, desired, live client.Object) (client.Object, error) {
	found, conflict, err := c.Observe(ctx, client.ObjectKeyFromObject(desired), live)
	if err != nil || conflict {
		return nil, err
	}
	if !found {
		live = nil
	}
	return c.Write(ctx, desired, live)
}

// Delete removes child, a child the parent controls that it no longer
// asks for (why says why, for its event), and only that object: the UID
// precondition guards against a same-named replacement. The answer goes
// through Policy as a write's does: a refusal is reported as one, a child
// replaced meanwhile is a stale read, one already gone needs nothing. err
// only when the API server did not answer.
func (c *Children) Delete(ctx context.Context, child client.Object, why string) error {
	uid := child.GetUID()
	err := c.Applier.Client.Delete(ctx, child, client.Preconditions{UID: &uid})
	kind := c.kindOf(child)
	switch {
	case err == nil:
		c.Applier.Deleted(child)
		c.Deleted = append(c.Deleted, fmt.Sprintf("%s %s: %s", kind, nameOf(child), why))
	case apierrors.IsNotFound(err):
		c.Applier.Deleted(child)
	case apierrors.IsConflict(err):
		c.Stale = true
	case apply.Answered(err):
		c.refuse(kind, err)
	default:
		return fmt.Errorf("deleting %s %s: %w", kind, nameOf(child), err)
	}
	return nil
}

// Patch changes obj, an object the parent's controller acts on but does
// not own (a Pod of its StatefulSet), with patch, which must carry obj's
// resourceVersion (client.MergeFromWithOptimisticLock): an object changed
// since it was read is a stale read, and the next event of it brings the
// next reconcile. A refusal is reported as a write's is; one gone needs
// nothing. It reports whether the patch was made. err only when the API
// server did not answer.
func (c *Children) Patch(ctx context.Context, obj client.Object, patch client.Patch) (bool, error) {
	err := c.Applier.Client.Patch(ctx, obj, patch)
	kind := c.kindOf(obj)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
	case apierrors.IsConflict(err):
		c.Stale = true
	case apply.Answered(err):
		c.refuse(kind, err)
	default:
		return false, fmt.Errorf("patching %s %s: %w", kind, nameOf(obj), err)
	}
	return false, nil
}

// refuse records the API server's refusal of a write of kind: the first
// one decides the status.
func (c *Children) refuse(kind string, err error) {
	if c.Refusal == nil {
		c.Refusal = &Refusal{Kind: kind, Err: err}
	}
}

// kindOf is obj's kind, for messages: its own, else the scheme's (a typed
// object read from the cache carries none).
func (c *Children) kindOf(obj client.Object) string {
	if kind := obj.GetObjectKind().GroupVersionKind().Kind; kind != "" {
		return kind
	}
	if gvk, err := c.Applier.Client.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}

// StopsPhases tells whether the phases after the current one must not
// run, for every kind alike: a child in conflict (no Service is made for a
// workload someone else runs, no Pod of it is relabelled) or a stale read
// (the reconcile of the newer child's event does the rest).
func (c *Children) StopsPhases() bool {
	return c != nil && (len(c.Conflicts) > 0 || c.Stale)
}

// Answer is the answer that decides the parent's status, in Policy's
// order of precedence: a conflict, then a refusal, then a stale read;
// AnswerApplied when every child is as the parent asks.
func (c *Children) Answer() Answer {
	switch {
	case len(c.Conflicts) > 0:
		return AnswerConflict
	case c.Refusal != nil:
		return c.Refusal.Answer()
	case c.Stale:
		return AnswerStale
	}
	return AnswerApplied
}

// NotReady returns Ready's reason and message (for a person) while a
// conflict or a refusal holds; ok is false when none does, and the kind
// judges its children itself.
func (c *Children) NotReady() (reason, message string, ok bool) {
	switch a := c.Answer(); a {
	case AnswerConflict:
		return RuleOf(a).Reason, fmt.Sprintf("%s exists and is not controlled by this %s; the operator leaves it untouched",
			strings.Join(c.Conflicts, " and "), c.Kind), true
	case AnswerInvalid, AnswerRefused:
		return RuleOf(a).Reason, c.Refusal.Message(), true
	}
	return "", "", false
}

// RecordEvents logs the children this reconcile wrote ("Applied children",
// the line test/chaos counts to prove there were never two leaders) and records one
// Normal event, reason Updated, when it changed existing ones (a new spec,
// or a child someone else had changed put back), and one, reason Deleted,
// when it deleted some. Creating the children is the expected outcome of
// creating the parent: Ready tells it, and an Event per parent would cost
// the API server a write more.
func (c *Children) RecordEvents(ctx context.Context, recorder events.EventRecorder) {
	log := ctrl.LoggerFrom(ctx)
	if len(c.Created) > 0 {
		log.Info("Applied children", "reason", "Created", "kinds", c.Created)
	}
	if len(c.Updated) > 0 {
		log.Info("Applied children", "reason", ReasonUpdated, "kinds", c.Updated)
		recorder.Eventf(c.Parent, nil, corev1.EventTypeNormal, ReasonUpdated, "Apply",
			"Updated %s %s", strings.Join(c.Updated, " and "), c.Parent.GetName())
	}
	if len(c.Deleted) > 0 {
		log.Info("Deleted children", "children", c.Deleted)
		recorder.Eventf(c.Parent, nil, corev1.EventTypeNormal, ReasonDeleted, "Delete",
			"Deleted %s", strings.Join(c.Deleted, "; "))
	}
}

// ReasonUpdated is the reason of the Normal event recorded on a parent when
// the operator changed its existing children.
const ReasonUpdated = "Updated"

// ReasonDeleted is the reason of the Normal event recorded on a parent when
// the operator deleted a child it no longer asks for.
const ReasonDeleted = "Deleted"

// Result ends every reconcile, as Policy says: a refusal other than
// Invalid is returned (retried with backoff), a conflict is looked at
// again after recheck, and a status write put off (StatusWriter.Batch)
// is made after wait. A child read as created but not yet in the cache
// (apply.CreatedChildren) is looked at again once no longer vouched for.
func (c *Children) Result(wait, recheck time.Duration) (ctrl.Result, error) {
	wait = minPositive(wait, c.Applier.Remembered)
	switch RuleOf(c.Answer()).Retry {
	case RetryBackoff:
		return ctrl.Result{}, fmt.Errorf("the API server refused the %s of %s %s: %w",
			c.Refusal.Kind, c.Kind, nameOf(c.Parent), c.Refusal.Err)
	case RetryRecheck:
		wait = minPositive(wait, recheck)
	case RetryOnEvent:
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// minPositive is the shorter of two waits, 0 meaning none.
func minPositive(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// controllerOf says who controls obj, for a person: "it is controlled by
// Kind/name" or "it has no controller".
func controllerOf(obj metav1.Object) string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return fmt.Sprintf("it is controlled by %s/%s", ref.Kind, ref.Name)
	}
	return "it has no controller"
}

// nameOf is obj's "namespace/name", or its name when it is cluster-scoped.
func nameOf(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
