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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"sunstrider.cn/operator/internal/metrics"
)

// create is Write of a child read as absent. It creates the body of the
// apply of desired rather than applying it: a forced apply has no "must
// not exist" precondition, so it would take over an object of the child's
// name the cache did not hold or someone created after the read (a user's
// ConfigMap would gain the operator's fields and a controller reference).
// The create fails on such an object instead, which existing then reads.
// The created child's managedFields are then made an apply's
// (ownAsApplied).
func (a *Applier) create(ctx context.Context, desired client.Object) (Outcome, error) {
	key := client.ObjectKeyFromObject(desired)
	kind := desired.GetObjectKind().GroupVersionKind().Kind
	cfg, err := applyConfiguration(desired)
	if err != nil {
		return Outcome{}, err
	}
	created := cfg.DeepCopy()
	err = a.Client.Create(ctx, created, client.FieldOwner(FieldOwner))
	switch {
	case err == nil:
	case apierrors.IsAlreadyExists(err):
		return a.existing(ctx, desired)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return Outcome{Stale: true}, nil
	case Answered(err):
		return Outcome{Rejected: err}, nil
	default:
		return Outcome{}, fmt.Errorf("creating %s %s: %w", kind, key, err)
	}
	metrics.ChildWritten(kind, metrics.ActionCreated)
	created, err = a.ownAsApplied(ctx, cfg, created)
	switch {
	case err == nil:
	case apierrors.IsNotFound(err), errors.Is(err, errReplaced):
		// Deleted (and perhaps created again) right after the create:
		// the next event settles it.
		return Outcome{Stale: true}, nil
	default:
		return Outcome{}, fmt.Errorf("recording the fields of the created %s %s as applied: %w", kind, key, err)
	}
	live, err := a.decode(desired, created)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Live: live, Action: Created}, nil
}

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
	obj, err := a.Client.Scheme().New(gvk)
	if err != nil {
		return Outcome{}, fmt.Errorf("reading %s %s: %w", gvk.Kind, key, err)
	}
	live, ok := obj.(client.Object)
	if !ok {
		return Outcome{}, fmt.Errorf("reading %s %s: %T is no client.Object", gvk.Kind, key, obj)
	}
	if err := a.APIReader.Get(ctx, key, live); err != nil {
		return Outcome{}, fmt.Errorf("reading %s %s, which a create found: %w", gvk.Kind, key, err)
	}
	if ref := metav1.GetControllerOfNoCopy(desired); ref != nil && IsOurs(live, ref.UID) {
		return a.update(ctx, desired, live)
	}
	return Outcome{Conflict: fmt.Sprintf("%s %s", gvk.Kind, key), Foreign: live}, nil
}

// ownAsApplied makes the managedFields of created, the child just created
// from cfg, those a server-side apply of cfg would have made: one Apply
// entry of the operator owning the fields cfg sets (appliedFields). A
// create records its fields under an Update entry instead, with the
// defaults the API server set; the operator's later applies would not
// prune a field it stops setting (the Update entry still owns it). The
// rewrite is client-go's csaupgrade patch, guarded by the resourceVersion
// as it replaces all managedFields. The child's own controller often
// writes between the create and the patch (kube-controller-manager a new
// Deployment's status): the patch is refused with a Conflict and made
// again at once from the child read again from the API server (as in
// takeOver; an unguarded patch, one request less, could drop the entry of
// such a write). It returns the child as last written.
func (a *Applier) ownAsApplied(ctx context.Context, cfg, created *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	applied, err := appliedFields(a.Client.Scheme(), cfg)
	if err != nil {
		// A kind client-go has no schema of (none of the children so
		// far): the Update entry's fields move as they are, the defaults
		// with them; a later apply prunes those, and the API server sets
		// them again.
		applied = nil
	}
	child, fresh := created, true
	err = retry.RetryOnConflict(wait.Backoff{Steps: 5}, func() error {
		if !fresh {
			var err error
			if child, err = a.readFull(ctx, created); err != nil {
				return err
			}
		}
		fresh = false
		patch, err := asAppliedPatch(child, applied)
		if err != nil || patch == nil {
			return err
		}
		return a.Client.Patch(ctx, child, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(FieldOwner))
	})
	return child, err
}

// asAppliedPatch returns the JSON patch that turns the operator's Update
// entry of obj into its Apply entry, owning applied (or the entry's own
// fields when applied is nil), guarded by obj's resourceVersion; nil when
// obj has no such entry. What another manager changed since the create is
// owned by both: the drift check finds it foreign all the same.
func asAppliedPatch(obj *unstructured.Unstructured, applied *fieldpath.Set) ([]byte, error) {
	entries := obj.GetManagedFields()
	if applied != nil {
		raw, err := applied.ToJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding the applied fields: %w", err)
		}
		for i, e := range entries {
			if e.Manager == FieldOwner && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
				entries[i].FieldsV1 = metav1.NewFieldsV1(string(raw))
			}
		}
	}
	rewritten := obj.DeepCopy()
	rewritten.SetManagedFields(entries)
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(rewritten, sets.New(FieldOwner), FieldOwner)
	if err != nil {
		return nil, fmt.Errorf("upgrading the managedFields of %s: %w", FieldOwner, err)
	}
	return patch, nil
}

// appliedFields is the set of fields a server-side apply of cfg makes its
// manager own, computed as the API server does: the fields cfg sets, typed
// by the schema of the built-in kinds client-go carries, less those no
// managedFields entry holds. An error for a kind that schema lacks.
func appliedFields(scheme *runtime.Scheme, cfg *unstructured.Unstructured) (*fieldpath.Set, error) {
	value, err := applyconfigurations.NewTypeConverter(scheme).ObjectToTyped(cfg, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("typing %s: %w", cfg.GroupVersionKind(), err)
	}
	set, err := value.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("listing the fields of %s: %w", cfg.GroupVersionKind(), err)
	}
	return set.Difference(strippedFields), nil
}

// strippedFields are the fields the API server leaves out of every
// managedFields entry (k8s.io/apimachinery's managedfields stripMeta).
var strippedFields = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)
