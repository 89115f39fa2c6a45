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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// IsControlledBy reports whether obj's controller reference points at owner.
func IsControlledBy(obj metav1.Object, ownerUID types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == ownerUID
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
