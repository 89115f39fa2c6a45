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

package apply

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Action is what Ensure did to a child.
type Action string

const (
	// Unchanged: the child already held what the parent asks for.
	Unchanged Action = ""
	// Created: the child did not exist and was created.
	Created Action = "Created"
	// Updated: the child existed and differed (a new spec, or a field
	// someone else changed or added was put back).
	Updated Action = "Updated"
)

// Outcome is what Ensure saw of a child and did to it.
type Outcome struct {
	// Live is the child as last seen: after the write when one was made
	// (the apply, or the create), else as read; nil when it does not exist
	// or is someone else's.
	Live client.Object
	// Action is what was written.
	Action Action
	// Conflict is set when an object of the child's name exists that the
	// parent does not control: "Deployment ns/name". Nothing was written.
	// Foreign is that object when the create ran into it (existing).
	Conflict string
	Foreign  client.Object
	// Stale is true when the write was refused for a reason the next event
	// settles, and nothing was written: the child was deleted, or replaced
	// by another object of its name, between the read and the write (the
	// write carried the UID read); the child read as absent was created by
	// someone else meanwhile (the create found it: the caller looks again,
	// and finds someone else's object or its own); or its namespace is
	// being deleted (and a namespaced parent with it: no failure to report,
	// nothing to retry).
	Stale bool
	// Rejected is the API server's answer when it refused the write
	// (Invalid, Forbidden by an admission webhook, a quota...). Live is
	// then the child as it was before.
	Rejected error
}

// Applier writes the children of one kind of parent: one path (read,
// ownership check, drift check, conditional apply, or create of an absent
// child) for all children of all kinds.
type Applier struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// APIReader reads from the API server: the object a create of a child
	// the cache does not hold ran into, and a child with all its
	// managedFields when an apply was refused beside another manager's
	// fields.
	APIReader client.Reader
	// Created, when set, remembers the children the controller created
	// until its cache holds them (CreatedChildren); Observe vouches for
	// them meanwhile.
	Created *CreatedChildren
	// Synced, when set, remembers the children found to hold what they
	// should (SyncedChildren), so that a child unchanged since is not
	// compared in full again.
	Synced *SyncedChildren
	// Remembered is set by Observe when it vouched for a child the cache
	// does not hold yet: how much longer it does. The reconcile looks
	// again by then (controller.Children.Result), in case the child went
	// before the cache ever held it.
	Remembered time.Duration
}

// Observe reads the child at key into live (an empty object of the child's
// type, with its kind set) from the cache: found tells whether it exists;
// conflict, when it is someone else's (IsOurs is false), names it
// ("Deployment ns/name"). A child the cache does not hold is reported
// absent without asking the API server: the cache may lag, or never hold a
// foreign object (label-filtered), but the write that follows is a create,
// which refuses an object of the name, and create then reads that object
// from the API server (existing). A new child thus costs no read. A child
// this controller created that the cache does not hold yet is found as the
// create returned it (Created), not created again.
func (a *Applier) Observe(ctx context.Context, ownerUID types.UID, key client.ObjectKey, live client.Object) (found bool, conflict string, err error) {
	if err = a.Client.Get(ctx, key, live); err != nil {
		if apierrors.IsNotFound(err) {
			found, err = a.recall(ownerUID, key, live)
			return found, "", err
		}
		return false, "", fmt.Errorf("reading %T %s: %w", live, key, err)
	}
	if a.Created.Len() > 0 {
		gvk, err := a.gvkOf(live)
		if err != nil {
			return false, "", err
		}
		a.Created.seen(gvk, key)
	}
	if IsOurs(live, ownerUID) {
		return true, "", nil
	}
	gvk, err := a.gvkOf(live)
	if err != nil {
		return found, "", err
	}
	return found, fmt.Sprintf("%s %s", gvk.Kind, key), nil
}

// recall fills live, an empty object the cache found nothing for at key,
// with the child the controller created there for the parent whose UID is
// ownerUID (Created), and tells whether it did. One created for another
// parent of the name (deleted and made again since) is not vouched for:
// the create that follows finds it, someone else's.
func (a *Applier) recall(ownerUID types.UID, key client.ObjectKey, live client.Object) (bool, error) {
	if a.Created.Len() == 0 {
		return false, nil
	}
	gvk, err := a.gvkOf(live)
	if err != nil {
		return false, err
	}
	created, left, ok := a.Created.get(gvk, key)
	if !ok || reflect.TypeOf(created) != reflect.TypeOf(live) || !IsOurs(created, ownerUID) {
		return false, nil
	}
	reflect.ValueOf(live).Elem().Set(reflect.ValueOf(created).Elem())
	a.Remembered = max(a.Remembered, left)
	return true, nil
}

// Deleted forgets live, a child the controller just deleted, if Created
// remembers it.
func (a *Applier) Deleted(live client.Object) {
	if a.Created.Len() == 0 {
		return
	}
	if gvk, err := a.gvkOf(live); err == nil {
		a.Created.seen(gvk, client.ObjectKeyFromObject(live))
	}
}

// Write makes the child desired exist as desired, given live, the child
// Observe found and the parent controls (nil when it does not exist). An
// absent child is created (create), never applied: an object of its name
// someone created after the read is left alone. A child that exists is
// left alone when it already holds desired and no other manager owns a
// field inside the operator's domain (fields.go); else it is applied with
// live's UID as a precondition, then what other managers still own there
// is taken over (takeOver).
//
// Errors are returned only when the API server could not be reached
// (Answered), an object could not be encoded, or the managedFields of a
// child just created could not be rewritten as an apply's; an answer of
// the API server to the write is in Outcome.Rejected.
func (a *Applier) Write(ctx context.Context, desired, live client.Object) (Outcome, error) {
	if err := SetHash(desired); err != nil {
		return Outcome{}, err
	}
	if live == nil {
		return a.create(ctx, desired)
	}
	return a.update(ctx, desired, live)
}

// gvkOf is obj's group, version and kind: its own, else the scheme's (a
// typed object read from the cache carries none).
func (a *Applier) gvkOf(obj client.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk, nil
	}
	return a.Client.GroupVersionKindFor(obj)
}
