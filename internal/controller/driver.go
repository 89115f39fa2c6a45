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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/api/meta"
	"sunstrider.cn/operator/internal/apply"
)

// Object is an object of a kind the driver reconciles: every kind of the
// operator's APIs.
type Object interface {
	client.Object
	meta.ObjectWithConditions
}

// Kind is what one kind tells the driver (Reconcile): its clients and
// memory, and its hooks. S is its scope, what one reconcile works on and
// observes. Only New, Begin, Phases and ComputeStatus are required.
type Kind[T Object, S any] struct {
	// Name is the kind's name, for messages ("Application").
	Name string
	// Client reads from the manager's cache and writes.
	Client client.Client
	// APIReader reads around the cache the object of a child's name that
	// refused its create (apply.Applier.Observe: a child is absent when the
	// cache holds none; the create that follows finds any other).
	APIReader client.Reader
	// Recorder records the events of what the reconcile did.
	Recorder events.EventRecorder
	// Written holds the status writes the cache does not hold yet.
	Written *WrittenObjects
	// Memory is what the controller remembers of its children; nil for a
	// kind that writes none (no Children then).
	Memory *apply.Memory

	// New returns an empty object of the kind.
	New func() T
	// Begin starts the scope of one reconcile of obj; children is nil for
	// a kind that writes none.
	Begin func(ctx context.Context, obj T, children *Children) S
	// Phases observe and act, in order. A phase returns an error only when
	// the API server did not answer: what the status would say is unknown.
	Phases []func(context.Context, S) error
	// Stop, when set, tells after a phase that the later ones must not run
	// (a conflict or a stale read always stops them: Children.StopsPhases).
	Stop func(S) bool
	// SkipStatus, when set, tells that this reconcile writes no status: an
	// event that follows brings the reconcile that does.
	SkipStatus func(S) bool
	// ComputeStatus sets obj's status from what s observed, reading only
	// obj (its previous conditions) and s: a pure function.
	ComputeStatus func(obj T, s S)
	// Batch puts off a status write that changes no condition
	// (StatusWriter.Batch); 0 writes each at once.
	Batch time.Duration
	// Wrote, when set, runs after a status write: orig is the object as
	// read (events of a transition, metrics).
	Wrote func(ctx context.Context, orig, obj T, s S)
	// Current, when set, runs once the status stored is this reconcile's,
	// written now or already so (not when put off or stale), and always in
	// a replica that does not lead.
	Current func(ctx context.Context, obj T, s S)
	// Gone, when set, runs when the object is not found.
	Gone func(ctx context.Context, key types.NamespacedName)
	// Leading, when set, tells whether this replica leads: only the leader
	// writes the status of a kind whose controller runs in every replica.
	Leading func() bool
	// ConflictRecheck, when set, is how often a parent blocked by a
	// foreign child looks again (Children.Result).
	ConflictRecheck func() time.Duration
	// Recheck, when set, is how soon this reconcile's object must be looked
	// at again although no event may come (an API not installed yet); 0
	// for no such need.
	Recheck func(S) time.Duration
}

// Reconcile is the one reconcile of every kind, in the order of the
// package doc: Get (NotFound ends it, and so does a deletion in progress),
// the phases through one child path (Children), the events of what was
// written, one pure status computation, one status write, and the retry
// Policy decides.
func Reconcile[T Object, S any](ctx context.Context, req ctrl.Request, k *Kind[T, S]) (ctrl.Result, error) {
	obj := k.New()
	if err := k.Written.Get(ctx, k.Client, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) && k.Gone != nil {
			k.Gone(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		// The garbage collector removes the children through their owner
		// references.
		return ctrl.Result{}, nil
	}

	var children *Children
	if k.Memory != nil {
		children = NewChildren(k.Client, k.APIReader, k.Memory, obj, k.Name)
	}
	s := k.Begin(ctx, obj, children)
	for _, phase := range k.Phases {
		if err := phase(ctx, s); err != nil {
			// The API server did not answer: the next phases and the status
			// write would fail the same way. Retry, the status unchanged.
			return ctrl.Result{}, err
		}
		if children.StopsPhases() || (k.Stop != nil && k.Stop(s)) {
			break
		}
	}
	if children != nil {
		// What was written is told, whatever becomes of the status.
		children.RecordEvents(ctx, k.Recorder)
		if children.Stale {
			// The newer child is on its way to the cache; its event
			// brings the next reconcile.
			ctrl.LoggerFrom(ctx).V(1).Info("Cached child is stale, waiting for the newer one")
			return ctrl.Result{}, nil
		}
	}

	wait, err := k.writeStatus(ctx, obj, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if k.Recheck != nil {
		wait = minPositive(wait, k.Recheck(s))
	}
	if children == nil {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	var recheck time.Duration
	if k.ConflictRecheck != nil {
		recheck = k.ConflictRecheck()
	}
	return children.Result(wait, recheck)
}

// writeStatus computes obj's status and writes it once, if it changed, and
// returns when to reconcile again for a write put off or a stale read.
func (k *Kind[T, S]) writeStatus(ctx context.Context, obj T, s S) (time.Duration, error) {
	if k.SkipStatus != nil && k.SkipStatus(s) {
		return 0, nil
	}
	if k.Leading != nil && !k.Leading() {
		if k.Current != nil {
			k.Current(ctx, obj, s)
		}
		return 0, nil
	}
	orig := obj.DeepCopyObject().(T)
	k.ComputeStatus(obj, s)
	w := StatusWriter{Client: k.Client, Recorder: k.Recorder, Written: k.Written, Batch: k.Batch}
	written, wait, err := w.Write(ctx, orig, obj)
	if err != nil {
		return 0, err
	}
	if written && k.Wrote != nil {
		k.Wrote(ctx, orig, obj, s)
	}
	if (written || wait == 0) && k.Current != nil {
		k.Current(ctx, obj, s)
	}
	return wait, nil
}
