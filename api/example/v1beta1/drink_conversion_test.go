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
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

func TestConvertSize(t *testing.T) {
	g := NewWithT(t)
	d := &Drink{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec:       DrinkSpec{Name: "bob", Drink: DrinkDetails{Kind: "tea", Size: SizeLarge}},
	}
	var hub examplev1.Drink
	g.Expect(d.ConvertTo(&hub)).To(Succeed())
	g.Expect(hub.Spec).To(Equal(examplev1.DrinkSpec{Name: "bob", Drink: "tea"}))
	g.Expect(hub.Annotations).To(Equal(map[string]string{SizeAnnotation: "Large"}))
	g.Expect(d.Annotations).To(BeNil(), "the source is untouched")

	var back Drink
	g.Expect(back.ConvertFrom(&hub)).To(Succeed())
	g.Expect(back.Spec.Drink.Size).To(Equal(SizeLarge))
	g.Expect(back.Annotations).To(BeNil(), "the size leaves the annotations")
}

// TestConvertClearedSize: a v1beta1 client clearing the size drops it from
// the v1 Drink, as its annotation only exists on the v1 side.
func TestConvertClearedSize(t *testing.T) {
	g := NewWithT(t)
	hub := &examplev1.Drink{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Annotations: map[string]string{SizeAnnotation: "Small"}},
		Spec:       examplev1.DrinkSpec{Name: "bob", Drink: "tea"},
	}
	var d Drink
	g.Expect(d.ConvertFrom(hub)).To(Succeed())
	g.Expect(d.Spec.Drink.Size).To(Equal(SizeSmall))
	d.Spec.Drink.Size = ""
	var written examplev1.Drink
	g.Expect(d.ConvertTo(&written)).To(Succeed())
	g.Expect(written.Annotations).NotTo(HaveKey(SizeAnnotation))
}

func TestConvertWrongHub(t *testing.T) {
	g := NewWithT(t)
	var d Drink
	g.Expect(d.ConvertTo(&notAHub{})).To(MatchError(ContainSubstring("unsupported hub")))
	g.Expect(d.ConvertFrom(&notAHub{})).To(MatchError(ContainSubstring("unsupported hub")))
}

// notAHub is a hub of another kind.
type notAHub struct{ examplev1.DrinkList }

func (*notAHub) Hub() {}
