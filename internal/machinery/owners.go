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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// IsControlledByKind reports whether obj's controller reference points at
// an object of kind gk, in any version of its group.
func IsControlledByKind(obj metav1.Object, gk schema.GroupKind) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != gk.Kind {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == gk.Group
}

// NotControlledByKind lets through the objects that no object of kind gk
// controls: a watch of children with Owns already delivers the others'
// events.
func NotControlledByKind(gk schema.GroupKind) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return !IsControlledByKind(obj, gk)
	})
}
