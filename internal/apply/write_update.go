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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/metrics"
)

// update is Write of a child that exists, live as read.
func (a *Applier) update(ctx context.Context, desired, live client.Object) (Outcome, error) {
	key := client.ObjectKeyFromObject(desired)
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	out := Outcome{Live: live, Action: Updated}
	drifted, foreign, err := a.Synced.Drifted(desired, live)
	if err != nil {
		return Outcome{}, err
	}
	if !drifted {
		out.Action = Unchanged
		return out, nil
	}
	cfg, err := applyConfiguration(desired)
	if err != nil {
		return Outcome{}, err
	}
	onlyThis(cfg, live)
	var written client.Object
	if foreign {
		written, err = a.reclaim(ctx, desired, live, cfg)
	} else {
		written, err = a.applyTyped(ctx, desired, cfg)
	}
	switch {
	case err == nil:
	case apierrors.IsConflict(err), apierrors.IsNotFound(err), errors.Is(err, errReplaced),
		apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return Outcome{Live: live, Stale: true}, nil
	case Answered(err):
		out.Action, out.Rejected = Unchanged, err
		return out, nil
	default:
		return Outcome{}, fmt.Errorf("applying %s %s: %w", kind, key, err)
	}
	metrics.ChildWritten(kind, updateAction(desired, live, foreign))
	out.Live = written
	return out, nil
}

// updateAction is the action label of a successful write of desired over
// live: restored when the parent asked for the same as at the last write
// (same hash), or when fields another manager owned were taken over.
func updateAction(desired, live client.Object, foreign bool) string {
	if foreign || live.GetAnnotations()[HashAnnotation] == desired.GetAnnotations()[HashAnnotation] {
		return metrics.ActionRestored
	}
	return metrics.ActionUpdated
}

// applyTyped is apply of cfg, desired's apply configuration, with the API
// server's answer decoded into a new object of desired's type, which it
// returns. The request is the same; the answer comes as protobuf for the
// built-in kinds (the client's content type for them), which the API
// server encodes and the operator decodes for a fraction of what JSON
// into unstructured and then into the typed object cost: controller-
// runtime's Apply takes only JSON answers, so this is its raw patch form.
func (a *Applier) applyTyped(ctx context.Context, desired client.Object, cfg *unstructured.Unstructured) (client.Object, error) {
	body, err := cfg.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the apply of %s %s: %w", cfg.GetKind(), client.ObjectKeyFromObject(cfg), err)
	}
	gvk := desired.GetObjectKind().GroupVersionKind()
	written, err := a.newChild(gvk)
	if err != nil {
		return nil, err
	}
	written.GetObjectKind().SetGroupVersionKind(gvk)
	written.SetNamespace(desired.GetNamespace())
	written.SetName(desired.GetName())
	err = a.Client.Patch(ctx, written, client.RawPatch(types.ApplyPatchType, body),
		client.FieldOwner(FieldOwner), client.ForceOwnership, noStrictDecoding)
	if replaced(err) {
		return nil, errReplaced
	}
	if err != nil {
		return nil, err
	}
	return written, nil
}

// apply server-side applies cfg as the operator, taking over what it sets,
// and fills cfg with the API server's answer, all its managedFields
// included (takeOver reads them); errReplaced when cfg's UID (onlyThis) is
// not the object's any more.
func (a *Applier) apply(ctx context.Context, cfg *unstructured.Unstructured) error {
	err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(cfg), client.FieldOwner(FieldOwner), client.ForceOwnership)
	if replaced(err) {
		return errReplaced
	}
	return err
}

// noStrictDecoding asks the API server not to decode an apply a second
// time, strictly, to find duplicate fields: the default (Warn) parses the
// apply's YAML twice, and YAML parsing is server-side apply's largest own
// cost (docs/performance.md). The operator's applies are encoding/json's
// output, which has no duplicate field; a field the kind does not have is
// refused by the apply itself whatever the directive
// (TestApplyRefusesUnknownFieldsWithoutStrictDecoding).
var noStrictDecoding = client.FieldValidation(metav1.FieldValidationIgnore)

// onlyThis makes the apply cfg change the child live and no other object
// of its name: the API server refuses it when live was deleted (a Conflict)
// or replaced (replaced). The UID is the precondition rather than live's
// resourceVersion, which moves on with every status write of the child's
// own controller: kube-controller-manager writes a Deployment's status
// right after a change of its spec, and an apply refused for that waited
// for the next event, so a Deployment edited by hand was restored later.
// The values the operator applies are right for any version of its own
// child.
func onlyThis(cfg *unstructured.Unstructured, live client.Object) {
	cfg.SetUID(live.GetUID())
}

// replaced tells whether err is the API server's answer to an apply whose
// UID (onlyThis) is not the object's any more: metadata.uid is immutable.
func replaced(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// errReplaced: the child read from the API server is not the one the
// cache held (deleted and created again meanwhile).
var errReplaced = errors.New("the child was replaced")

// reclaim is update's write of a child live in which other managers own
// fields inside the operator's domain: the apply of cfg, then takeOver.
// It returns the child as last applied.
func (a *Applier) reclaim(ctx context.Context, desired, live client.Object, cfg *unstructured.Unstructured) (client.Object, error) {
	err := a.apply(ctx, cfg)
	switch {
	case err == nil:
		cfg, err = a.takeOver(ctx, desired, live, cfg)
	case apierrors.IsInvalid(err):
		// What the operator sets, beside what another manager added, is
		// not a valid object (a port of the same name): take over first,
		// from the child as the API server holds it.
		var full *unstructured.Unstructured
		if full, err = a.readFull(ctx, live); err == nil {
			cfg, err = a.takeOver(ctx, desired, live, full)
		}
	}
	if err != nil {
		return nil, err
	}
	return a.decode(desired, cfg)
}

// readFull reads the child live names from the API server, with the
// managedFields the cache keeps only in part; errReplaced when it is no
// longer live.
func (a *Applier) readFull(ctx context.Context, live client.Object) (*unstructured.Unstructured, error) {
	gvk, err := a.gvkOf(live)
	if err != nil {
		return nil, err
	}
	full := &unstructured.Unstructured{}
	full.SetGroupVersionKind(gvk)
	if err := a.APIReader.Get(ctx, client.ObjectKeyFromObject(live), full); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", full.GetKind(), client.ObjectKeyFromObject(live), err)
	}
	if full.GetUID() != live.GetUID() {
		return nil, errReplaced
	}
	return full, nil
}

// takeOver follows an apply over a child live in which other managers
// owned fields inside the operator's domain. The forced apply restored the
// values the operator sets and took those fields over; applied, the API
// server's answer, carries the full managedFields and tells what other
// managers still own: list entries or map keys the operator does not set,
// or fields they hold with the value the operator sets. Those are moved to
// the operator (ReclaimPatch), and a second apply removes what the
// operator does not set. A value changed by hand thus costs one request,
// an entry added by hand three, two more when the child's controller
// wrote its status in between (the patch is guarded by the
// resourceVersion, as it replaces all managedFields). applied may also be
// the child as read (readFull) when the first apply was refused. It returns
// the child as last applied.
func (a *Applier) takeOver(ctx context.Context, desired, live client.Object, applied *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	key := client.ObjectKeyFromObject(live)
	moved, fresh := false, true
	// kube-controller-manager writes a Deployment's status right after the
	// change that brought the operator here, often between the apply and
	// the patch: the patch is made again at once (no backoff: the read
	// takes a round trip) from the child as it is now.
	err := retry.RetryOnConflict(wait.Backoff{Steps: 5}, func() error {
		if !fresh {
			var err error
			if applied, err = a.readFull(ctx, live); err != nil {
				return err
			}
		}
		fresh = false
		patch, err := ReclaimPatch(applied)
		if moved = patch != nil; err != nil || !moved {
			return err
		}
		return a.Client.Patch(ctx, applied, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(FieldOwner))
	})
	if err != nil {
		return nil, fmt.Errorf("taking over the fields others changed in %s %s: %w", applied.GetKind(), key, err)
	}
	if !moved {
		return applied, nil
	}
	cfg, err := applyConfiguration(desired)
	if err != nil {
		return nil, err
	}
	onlyThis(cfg, live)
	if err := a.apply(ctx, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decode is the typed form, desired's type, of the child written as u.
func (a *Applier) decode(desired client.Object, u *unstructured.Unstructured) (client.Object, error) {
	gvk := desired.GetObjectKind().GroupVersionKind()
	typed, err := a.newChild(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, fmt.Errorf("decoding the written %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(desired), err)
	}
	return typed, nil
}

// newChild is an empty object of the child kind gvk, of its Go type.
func (a *Applier) newChild(gvk schema.GroupVersionKind) (client.Object, error) {
	obj, err := a.Client.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	child, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s: %T is no client.Object", gvk.Kind, obj)
	}
	return child, nil
}

// applyConfiguration turns a typed desired object into the body of an
// apply: its unstructured form without status, nulls (such as a zero
// creationTimestamp) or resourceVersion.
func applyConfiguration(desired client.Object) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", desired, err)
	}
	delete(obj, "status")
	pruneNulls(obj)
	u := &unstructured.Unstructured{Object: obj}
	u.SetResourceVersion("")
	return u, nil
}

// pruneNulls removes null values from m and the maps and lists below it.
func pruneNulls(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			pruneNulls(t)
		case []any:
			for _, e := range t {
				if em, ok := e.(map[string]any); ok {
					pruneNulls(em)
				}
			}
		}
	}
}
