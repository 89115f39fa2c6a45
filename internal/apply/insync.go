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
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
)

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
