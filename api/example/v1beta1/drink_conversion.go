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

package v1beta1

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

// SizeAnnotation holds, on a v1 Drink, the spec.drink.size of a Drink
// written as v1beta1, which v1 has no field for. The conversion to v1
// writes it when the size is set; the conversion from v1 moves it back to
// spec.drink.size. A v1 client may edit or remove it: the admission webhook
// then checks its value is a DrinkSize.
const SizeAnnotation = "example.com/v1beta1-drink-size"

var _ conversion.Convertible = &Drink{}

// ConvertTo converts this v1beta1 Drink to the hub version v1, keeping a
// set spec.drink.size in SizeAnnotation.
func (src *Drink) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*examplev1.Drink)
	if !ok {
		return fmt.Errorf("converting a v1beta1 Drink: unsupported hub %T", dstRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = examplev1.DrinkSpec{Name: src.Spec.Name, Drink: src.Spec.Drink.Kind}
	if src.Spec.Drink.Size != "" {
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations[SizeAnnotation] = string(src.Spec.Drink.Size)
	}
	dst.Status = examplev1.DrinkStatus(*src.Status.DeepCopy())
	return nil
}

// ConvertFrom converts the hub version v1 to this v1beta1 Drink, moving a
// non-empty SizeAnnotation back to spec.drink.size.
func (dst *Drink) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*examplev1.Drink)
	if !ok {
		return fmt.Errorf("converting to a v1beta1 Drink: unsupported hub %T", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = DrinkSpec{Name: src.Spec.Name, Drink: DrinkDetails{Kind: src.Spec.Drink}}
	if size := src.Annotations[SizeAnnotation]; size != "" {
		dst.Spec.Drink.Size = DrinkSize(size)
		delete(dst.Annotations, SizeAnnotation)
		if len(dst.Annotations) == 0 {
			dst.Annotations = nil
		}
	}
	dst.Status = DrinkStatus(*src.Status.DeepCopy())
	return nil
}
