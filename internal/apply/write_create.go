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
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/metrics"
)

// create is Write of a child read as absent: the forced apply of desired
// with a resourceVersion no object has (absentOnly) as its precondition.
// The API server creates the child when no object of its name exists,
// with the managedFields of an apply (one Apply entry of the operator, as
// every later apply finds them: a field it stops setting is removed), and
// refuses it with a Conflict when one does: a forced apply without the
// precondition would take over an object of the child's name the cache did
// not hold or someone created after the read (a user's ConfigMap would
// gain the operator's fields and a controller reference). existing then
// reads that object. One request per child created, where a create and
// the rewrite of its managedFields into an apply's took two.
func (a *Applier) create(ctx context.Context, desired client.Object) (Outcome, error) {
	key := client.ObjectKeyFromObject(desired)
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	cfg, err := applyConfiguration(desired)
	if err != nil {
		return Outcome{}, err
	}
	cfg.SetResourceVersion(absentOnly)
	live, err := a.applyTyped(ctx, desired, cfg)
	switch {
	case err == nil:
	case apierrors.IsConflict(err):
		return a.existing(ctx, desired)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return Outcome{Stale: true}, nil
	case Answered(err):
		return Outcome{Rejected: err}, nil
	default:
		return Outcome{}, fmt.Errorf("creating %s %s: %w", kind, key, err)
	}
	metrics.ChildWritten(kind, metrics.ActionCreated)
	a.Created.remember(desired.GetObjectKind().GroupVersionKind(), live)
	return Outcome{Live: live, Action: Created}, nil
}

// absentOnly is the resourceVersion of create's apply: the largest a
// resourceVersion can be (an unsigned 64-bit integer), which no stored
// object has, so the API server's check of it (an apply's resourceVersion
// is a precondition) fails for every object of the child's name. On
// create, the API server gives the object its own.
//
// The contract: create never overwrites. An apply carrying absentOnly
// creates an absent object and is refused (Conflict) for any object of the
// name, whoever made it and whatever it holds; TestWriteCreates ("an
// object created after the read is not taken over") holds the API server
// to it.
var absentOnly = strconv.FormatUint(math.MaxUint64, 10)

// existing is create's answer when an object of the child's name exists:
// read from the API server, it is someone else's (a Conflict, never
// written) or the parent's own child the cache does not hold, which is
// then updated as if read from the cache (update): a child its cache has
// not caught up with, or one the parent controls without the operator's
// label (the seed design's, taken over), whose event never comes. Gone
// again by the read, it is an error, retried with backoff.
func (a *Applier) existing(ctx context.Context, desired client.Object) (Outcome, error) {
	key := client.ObjectKeyFromObject(desired)
	gvk := desired.GetObjectKind().GroupVersionKind()
	live, err := a.newChild(gvk)
	if err != nil {
		return Outcome{}, fmt.Errorf("reading %s %s: %w", gvk.Kind, key, err)
	}
	if err := a.APIReader.Get(ctx, key, live); err != nil {
		return Outcome{}, fmt.Errorf("reading %s %s, which a create found: %w", gvk.Kind, key, err)
	}
	if ref := metav1.GetControllerOfNoCopy(desired); ref != nil && IsOurs(live, ref.UID) {
		return a.update(ctx, desired, live)
	}
	return Outcome{Conflict: fmt.Sprintf("%s %s", gvk.Kind, key), Foreign: live}, nil
}
