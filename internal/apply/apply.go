// Package apply holds what every controller of this operator shares when it
// owns child objects: one field owner for server-side apply, the ownership
// rules, and the drift check that keeps the operator silent at steady state.
package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// FieldOwner is the server-side apply field manager of every write the
	// operator makes. It never changes: changing it would orphan the fields
	// owned under the old name.
	FieldOwner = "sunstrider-operator"

	// ManagedByLabel marks children the operator made, so they can be found
	// (and cached) by label.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel on the operator's children.
	ManagedByValue = "sunstrider-operator"

	// HashAnnotation records a hash of the configuration the operator last
	// applied to a child. A changed hash means the desired state changed
	// (including removed fields, which a comparison with the live object
	// cannot see).
	HashAnnotation = "sunstrider.cn/applied-config-hash"
)

// Hash returns a short stable hash of obj's JSON form.
func Hash(obj any) (string, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("hashing desired object: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}

// SetHash stores the hash of obj (computed without the annotation) in its
// HashAnnotation.
func SetHash(obj metav1.Object) error {
	annotations := obj.GetAnnotations()
	delete(annotations, HashAnnotation)
	obj.SetAnnotations(annotations)
	h, err := Hash(obj)
	if err != nil {
		return err
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[HashAnnotation] = h
	obj.SetAnnotations(annotations)
	return nil
}

// IsOurs reports whether obj is a child the operator made for the owner
// with ownerUID: its controller reference points at that owner, or it has
// no controller reference at all (someone stripped it, or the owner was
// deleted with orphaning) but carries the operator's label and applied-config
// hash. Anything else is someone else's and is never adopted or overwritten.
func IsOurs(obj metav1.Object, ownerUID types.UID) bool {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return ref.UID == ownerUID
	}
	_, hashed := obj.GetAnnotations()[HashAnnotation]
	return hashed && obj.GetLabels()[ManagedByLabel] == ManagedByValue
}

// Get reads the object at key into obj from cached and, when cached has
// none, confirms with uncached (the API server): the cache may lag behind.
// It is for an object a parent uses but does not make its child (the
// Guestbook's ConfigMap once it exists, whoever made it): a child is read
// with Applier.Observe instead, which needs no second read, as the create
// that follows a miss refuses an object of the name. found is false only
// when neither has it.
func Get(ctx context.Context, cached, uncached client.Reader, key client.ObjectKey, obj client.Object) (found bool, err error) {
	err = cached.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		err = uncached.Get(ctx, key, obj)
	}
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("reading %T %s: %w", obj, key, err)
	}
}

// IsControlledBy reports whether obj's controller reference points at owner.
func IsControlledBy(obj metav1.Object, ownerUID types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == ownerUID
}

// InSync reports whether live already holds what desired says: the same
// applied-config hash, every label, annotation and owner reference of desired,
// and every field of desired's spec (or data) with the same value. Fields the
// server or other actors add to live are ignored, so defaulted and assigned
// fields (clusterIP, nodePort, imagePullPolicy) never count as drift.
func InSync(desired, live runtime.Object) (bool, error) {
	d, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return false, fmt.Errorf("converting desired %T: %w", desired, err)
	}
	l, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return false, fmt.Errorf("converting live %T: %w", live, err)
	}
	dm, _ := d["metadata"].(map[string]any)
	lm, _ := l["metadata"].(map[string]any)
	for _, key := range []string{"labels", "annotations"} {
		if !subset(dm[key], lm[key]) {
			return false, nil
		}
	}
	// Owner references are matched one by one: other owners may be present.
	want, _ := dm["ownerReferences"].([]any)
	have, _ := lm["ownerReferences"].([]any)
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h any) bool { return subset(w, h) }) {
			return false, nil
		}
	}
	for key, value := range d {
		if isTypeMetaOrStatus(key) {
			continue
		}
		if !subset(value, l[key]) {
			return false, nil
		}
	}
	return true, nil
}

// subset reports whether every value set in want is present with the same
// value in have. Lists must have the same length and match element-wise.
func subset(want, have any) bool {
	switch w := want.(type) {
	case nil:
		return true
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		for k, v := range w {
			if v == nil {
				continue
			}
			hv, present := h[k]
			if !present {
				if isEmpty(v) {
					continue
				}
				return false
			}
			if !subset(v, hv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		if len(w) != len(h) {
			return false
		}
		for i := range w {
			if !subset(w[i], h[i]) {
				return false
			}
		}
		return true
	default:
		return fmt.Sprint(want) == fmt.Sprint(have) && sameKind(want, have)
	}
}

// isEmpty tells whether v is an empty map or list, which the API server may
// drop. An empty string is a value: in a map such as labels, a selector or a
// ConfigMap's data, a key with the value "" and no key are different (the
// apply puts the key back); a string field of a struct is in the JSON form
// of both objects or of neither.
func isEmpty(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func sameKind(a, b any) bool {
	switch a.(type) {
	case string:
		_, ok := b.(string)
		return ok
	case bool:
		_, ok := b.(bool)
		return ok
	default:
		// Numbers: int64 and float64 may both appear for the same value.
		_, sa := b.(string)
		_, ba := b.(bool)
		return !sa && !ba
	}
}
