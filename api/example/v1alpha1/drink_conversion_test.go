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
	"maps"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

func TestParseOrder(t *testing.T) {
	tests := []struct {
		order, drink, name string
	}{
		{order: "coffee for my-drink", drink: "coffee", name: "my-drink"},
		{order: "green tea for Table for two", drink: "green tea", name: "Table for two"},
		{order: "coffee", drink: "coffee"},
		{order: " for ", drink: "", name: ""},
	}
	for _, tt := range tests {
		t.Run(tt.order, func(t *testing.T) {
			g := NewWithT(t)
			drink, name := ParseOrder(tt.order)
			g.Expect(drink).To(Equal(tt.drink))
			g.Expect(name).To(Equal(tt.name))
		})
	}
}

func TestConvertFromHub(t *testing.T) {
	tests := []struct {
		name      string
		spec      examplev1.DrinkSpec
		wantOrder string
		wantStash string
	}{
		{name: "plain", spec: examplev1.DrinkSpec{Name: "my-drink", Drink: "coffee"}, wantOrder: "coffee for my-drink"},
		{
			name:      "name holding for",
			spec:      examplev1.DrinkSpec{Name: "Table for two", Drink: "green tea"},
			wantOrder: "green tea for Table for two",
		},
		{
			name:      "drink holding for",
			spec:      examplev1.DrinkSpec{Name: "bob", Drink: "tea for two"},
			wantOrder: "tea for two for bob",
			wantStash: `{"name":"bob","drink":"tea for two"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			hub := &examplev1.Drink{
				ObjectMeta: metav1.ObjectMeta{Name: "d", Annotations: map[string]string{"keep": "me"}},
				Spec:       tt.spec,
			}
			var d Drink
			g.Expect(d.ConvertFrom(hub)).To(Succeed())
			g.Expect(d.Spec.Order).To(Equal(tt.wantOrder))
			g.Expect(d.Annotations).To(HaveKeyWithValue("keep", "me"))
			if tt.wantStash == "" {
				g.Expect(d.Annotations).NotTo(HaveKey(SpecAnnotation))
			} else {
				g.Expect(d.Annotations).To(HaveKeyWithValue(SpecAnnotation, tt.wantStash))
			}
		})
	}
}

func TestConvertToHub(t *testing.T) {
	stash := `{"name":"bob","drink":"tea for two"}`
	tests := []struct {
		name  string
		order string
		stash *string
		want  examplev1.DrinkSpec
		// keepStash: the round trip (v1alpha1 -> v1 -> v1alpha1) gives the
		// stash back; a stale or broken stash is dropped, as the v1 spec
		// it leads to is the order's own reading.
		keepStash bool
	}{
		{name: "no stash", order: "tea for two for bob", want: examplev1.DrinkSpec{Drink: "tea", Name: "two for bob"}},
		{name: "stash matching the order", order: "tea for two for bob", stash: &stash,
			want: examplev1.DrinkSpec{Drink: "tea for two", Name: "bob"}, keepStash: true},
		{name: "stale stash: the order was edited", order: "coffee for bob", stash: &stash,
			want: examplev1.DrinkSpec{Drink: "coffee", Name: "bob"}},
		{name: "stash that is not JSON", order: "tea for two for bob", stash: new("{"),
			want: examplev1.DrinkSpec{Drink: "tea", Name: "two for bob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d := &Drink{
				ObjectMeta: metav1.ObjectMeta{Name: "d", Annotations: map[string]string{"keep": "me"}},
				Spec:       DrinkSpec{Order: tt.order},
			}
			if tt.stash != nil {
				d.Annotations[SpecAnnotation] = *tt.stash
			}
			original := maps.Clone(d.Annotations)

			var hub examplev1.Drink
			g.Expect(d.ConvertTo(&hub)).To(Succeed())
			g.Expect(hub.Spec).To(Equal(tt.want))
			g.Expect(hub.Annotations).To(Equal(map[string]string{"keep": "me"}), "the stash never reaches v1, the rest does")
			g.Expect(d.Annotations).To(Equal(original), "the source is untouched")
			g.Expect(d.Spec.Order).To(Equal(tt.order), "the source is untouched")

			var back Drink
			g.Expect(back.ConvertFrom(&hub)).To(Succeed())
			g.Expect(back.Spec.Order).To(Equal(tt.order), "the round trip gives the order back")
			want := map[string]string{"keep": "me"}
			if tt.keepStash {
				want = original
			}
			g.Expect(back.Annotations).To(Equal(want), "the round-tripped annotations, against the original's %v", original)
		})
	}
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
