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

package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

// SpecAnnotation holds, on a v1alpha1 Drink, the JSON of the v1 spec when
// spec.order cannot give it back: when the v1 drink contains " for ". It is
// written and read by the conversion only; a stale value (one that no
// longer formats to spec.order) is ignored.
const SpecAnnotation = "example.com/v1-spec"

// orderSeparator separates the drink from the name in spec.order.
const orderSeparator = " for "

var _ conversion.Convertible = &Drink{}

// FormatOrder writes a drink and a name as a v1alpha1 spec.order.
func FormatOrder(drink, name string) string {
	return drink + orderSeparator + name
}

// ParseOrder cuts a v1alpha1 spec.order at its first " for " into a drink
// and a name. An order without " for " is all drink.
func ParseOrder(order string) (drink, name string) {
	drink, name, _ = strings.Cut(order, orderSeparator)
	return drink, name
}

// ConvertTo converts this v1alpha1 Drink to the hub version v1. The drink
// and the name come from spec.order, unless SpecAnnotation holds a v1 spec
// that formats to the same order: that spec is then taken as is.
func (src *Drink) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*examplev1.Drink)
	if !ok {
		return fmt.Errorf("converting a v1alpha1 Drink: unsupported hub %T", dstRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = specToV1(src.Spec.Order, dst.Annotations[SpecAnnotation])
	deleteAnnotation(&dst.Annotations, SpecAnnotation)
	dst.Status = examplev1.DrinkStatus(*src.Status.DeepCopy())
	return nil
}

// ConvertFrom converts the hub version v1 to this v1alpha1 Drink. The v1
// spec goes to SpecAnnotation when spec.order cannot give it back.
func (dst *Drink) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*examplev1.Drink)
	if !ok {
		return fmt.Errorf("converting to a v1alpha1 Drink: unsupported hub %T", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec.Order = FormatOrder(src.Spec.Drink, src.Spec.Name)
	deleteAnnotation(&dst.Annotations, SpecAnnotation)
	if specToV1(dst.Spec.Order, "") != src.Spec {
		stash, err := json.Marshal(src.Spec)
		if err != nil {
			return fmt.Errorf("converting Drink %s/%s to v1alpha1: encoding its v1 spec: %w", src.Namespace, src.Name, err)
		}
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations[SpecAnnotation] = string(stash)
	}
	dst.Status = DrinkStatus(*src.Status.DeepCopy())
	return nil
}

// specToV1 returns the v1 spec of an order: the stashed v1 spec when it is
// valid JSON and formats to the order, otherwise the parsed order over the
// stashed spec (so that v1 fields unknown to v1alpha1 survive an edit of
// the order).
func specToV1(order, stash string) examplev1.DrinkSpec {
	var spec examplev1.DrinkSpec
	if stash != "" {
		if err := json.Unmarshal([]byte(stash), &spec); err != nil {
			spec = examplev1.DrinkSpec{}
		}
	}
	if FormatOrder(spec.Drink, spec.Name) != order {
		spec.Drink, spec.Name = ParseOrder(order)
	}
	return spec
}

// deleteAnnotation removes key from annotations, leaving nil rather than an
// empty map once it removed the last one.
func deleteAnnotation(annotations *map[string]string, key string) {
	if _, ok := (*annotations)[key]; !ok {
		return
	}
	delete(*annotations, key)
	if len(*annotations) == 0 {
		*annotations = nil
	}
}
