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

package machinery

import (
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
)

// The operator's kinds that make children, matched by group and kind
// (any version), not by group alone: example.com is anybody's group.
var (
	applicationKind = sunappsv1.GroupVersion.WithKind("Application").GroupKind()
	guestbookKind   = webappv1.GroupVersion.WithKind("Guestbook").GroupKind()
	drinkKind       = examplev1.GroupVersion.WithKind("Drink").GroupKind()
)

// configMapOwners are the kinds that make ConfigMaps.
var configMapOwners = []schema.GroupKind{guestbookKind, drinkKind}

// IsControlledByOneOf reports whether obj's controller reference names one
// of kinds (any version of its group): whether it may be a child an
// operator kind made, which the cache keeps whole.
//
// Not the apply.ManagedByLabel: anyone who may write an object may set
// that label on it, and the cache of the label-selected kinds would then
// hold it whole, however large (docs/security.md). A controller reference
// is no proof either, but one naming no object of that kind gets its
// object deleted by the garbage collector: a lasting one needs a parent in
// the object's namespace, made by someone who may make the operator's
// kinds there. Only the kinds that make children of the object's kind
// count, so that a parent of one kind does not make objects of another
// kind it never makes cached whole.
func IsControlledByOneOf(obj metav1.Object, kinds ...schema.GroupKind) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && slices.Contains(kinds, gv.WithKind(ref.Kind).GroupKind())
}

// ForeignMetadataTransform returns the cache transform that keeps, of an
// object none of owners controls (IsControlledByOneOf), only the
// metadata with which the controllers recognise that it is not theirs, or
// that it is a child of theirs that lost its controller reference
// (apply.IsOurs): name, namespace, uid, resourceVersion (informers and
// clients rely on it), generation, creation and deletion timestamps,
// labels, owner references and, of the annotations, apply.HashAnnotation
// alone. Its spec, status, data, other annotations, finalizers and
// managedFields never enter the cache, so a foreign object weighs a few
// hundred bytes whatever its size. The object stays of its own type (a
// new, empty one, whatever the kind: one transform serves every kind of
// child): the controllers and the cache's typed clients read it as before.
//
// The operator's children (objects one of owners, the kinds that make
// children of the object's kind, controls) are kept whole: the drift check
// compares them. A child that lost its controller reference (edited by
// hand, or orphaned) is stripped; the controller still finds it its own (label and hash),
// sees it drifted and applies it, controller reference included, after
// which the cache holds it whole again. An object someone else made,
// labelled or not, is a conflict, read from the cache as before and never
// written.
//
// Anything that is not an object (a deletion tombstone) is returned
// unchanged. The transform is idempotent.
func ForeignMetadataTransform(owners ...schema.GroupKind) toolscache.TransformFunc {
	return func(in any) (any, error) {
		obj, ok := in.(client.Object)
		if !ok || IsControlledByOneOf(obj, owners...) {
			return in, nil
		}
		t := reflect.TypeOf(obj)
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return in, nil
		}
		stripped, ok := reflect.TypeAssert[client.Object](reflect.New(t.Elem()))
		if !ok {
			return in, nil
		}
		stripped.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		copyForeignMetadata(stripped, obj)
		return stripped, nil
	}
}

// copyForeignMetadata sets on to the metadata ForeignMetadataTransform
// keeps of from. The maps and slices are shared: from is dropped.
func copyForeignMetadata(to, from metav1.Object) {
	to.SetName(from.GetName())
	to.SetNamespace(from.GetNamespace())
	to.SetUID(from.GetUID())
	to.SetResourceVersion(from.GetResourceVersion())
	to.SetGeneration(from.GetGeneration())
	to.SetCreationTimestamp(from.GetCreationTimestamp())
	to.SetDeletionTimestamp(from.GetDeletionTimestamp())
	to.SetLabels(from.GetLabels())
	to.SetOwnerReferences(from.GetOwnerReferences())
	if hash, ok := from.GetAnnotations()[apply.HashAnnotation]; ok {
		to.SetAnnotations(map[string]string{apply.HashAnnotation: hash})
	}
}
