package apply

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

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

// gvkOf is obj's group, version and kind: its own, else the scheme's (a
// typed object read from the cache carries none).
func (a *Applier) gvkOf(obj client.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk, nil
	}
	return a.Client.GroupVersionKindFor(obj)
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

// updateAction is the action label of a successful write of desired over
// live: restored when the parent asked for the same as at the last write
// (same hash), or when fields another manager owned were taken over.
func updateAction(desired, live client.Object, foreign bool) string {
	if foreign || live.GetAnnotations()[HashAnnotation] == desired.GetAnnotations()[HashAnnotation] {
		return metrics.ActionRestored
	}
	return metrics.ActionUpdated
}

// RefusalMessage is the condition message, written for a person, of a
// child's write the API server refused with err.
func RefusalMessage(kind string, err error) string {
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	return fmt.Sprintf("The API server refused the %s: %s", kind, msg)
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

// errReplaced: the child read from the API server is not the one the
// cache held (deleted and created again meanwhile).
var errReplaced = errors.New("the child was replaced")

// Answered is the operator's error policy: it tells whether err is an
// answer of the API server about the request (Invalid, Forbidden, a quota,
// a Conflict...), which the parent's status reports, rather than a failure
// to reach the server or a server too busy to answer (timeouts, 429, 503),
// which is retried without touching the status.
func Answered(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	switch {
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err):
		return false
	}
	return true
}
