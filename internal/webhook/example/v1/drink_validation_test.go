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

package v1

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
)

func newDrink(name, kind string, annotations map[string]string) *examplev1.Drink {
	return &examplev1.Drink{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Annotations: annotations},
		Spec:       examplev1.DrinkSpec{Name: name, Drink: kind},
	}
}

// errorFields returns "type field" of each error, for short assertions.
func errorFields(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestValidateDrink(t *testing.T) {
	sizeKey := "metadata.annotations[" + examplev1beta1.SizeAnnotation + "]"
	tests := []struct {
		name  string
		drink *examplev1.Drink
		want  []string
	}{
		{name: "valid", drink: newDrink("Table for two", "green tea", nil)},
		{name: "valid with a size", drink: newDrink("mine", "7up", map[string]string{examplev1beta1.SizeAnnotation: "Small"})},
		{name: "longest", drink: newDrink(strings.Repeat("é", 253), strings.Repeat("d", 253), nil)},
		{name: "empty", drink: newDrink("", "", nil),
			want: []string{"FieldValueRequired spec.name", "FieldValueRequired spec.drink"}},
		{name: "too long", drink: newDrink(strings.Repeat("n", 254), strings.Repeat("d", 254), nil),
			want: []string{"FieldValueTooLong spec.name", "FieldValueTooLong spec.drink"}},
		{name: "control character", drink: newDrink("tab\there", "coffee", nil),
			want: []string{"FieldValueInvalid spec.name"}},
		{name: "drink not lowercase words", drink: newDrink("mine", "green  tea", nil),
			want: []string{"FieldValueInvalid spec.drink"}},
		{name: "size not a size", drink: newDrink("mine", "tea", map[string]string{examplev1beta1.SizeAnnotation: ""}),
			want: []string{"FieldValueNotSupported " + sizeKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(errorFields(validateDrink(tt.drink))).To(HaveExactElements(tt.want))
		})
	}
}

func TestValidateDrinkMessages(t *testing.T) {
	g := NewWithT(t)
	errs := validateDrink(newDrink("a\x7fb", "Tea", nil))
	g.Expect(errs).To(HaveLen(2))
	g.Expect(errs[0].Detail).To(Equal(examplev1.NameControlMessage))
	g.Expect(errs[1].Detail).To(Equal(examplev1.DrinkMessage))
}

// TestValidateDrinkUpdate: only the fields an update changes are checked.
func TestValidateDrinkUpdate(t *testing.T) {
	stored := newDrink("old\nname", "Coffee", map[string]string{examplev1beta1.SizeAnnotation: "Tall"})
	tests := []struct {
		name string
		edit func(*examplev1.Drink)
		want []string
	}{
		{name: "metadata only", edit: func(d *examplev1.Drink) { d.Labels = map[string]string{"a": "b"} }},
		{name: "name fixed", edit: func(d *examplev1.Drink) { d.Spec.Name = "new name" }},
		{name: "drink changed to another invalid one", edit: func(d *examplev1.Drink) { d.Spec.Drink = "Tea" },
			want: []string{"FieldValueInvalid spec.drink"}},
		{name: "size changed to another invalid one",
			edit: func(d *examplev1.Drink) { d.Annotations[examplev1beta1.SizeAnnotation] = "Grande" },
			want: []string{"FieldValueNotSupported metadata.annotations[" + examplev1beta1.SizeAnnotation + "]"}},
		{name: "size removed", edit: func(d *examplev1.Drink) { d.Annotations = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := stored.DeepCopy()
			tt.edit(d)
			NewWithT(t).Expect(errorFields(validateDrinkUpdate(stored, d))).To(HaveExactElements(tt.want))
		})
	}
}

func TestDefaultDrink(t *testing.T) {
	tests := []struct {
		drink, wantDrink string
		size, wantSize   string
	}{
		{drink: "coffee", wantDrink: "coffee"},
		{drink: "  Green \t TEA\n", wantDrink: "green tea"},
		{drink: "", wantDrink: ""},
		{drink: "tea", wantDrink: "tea", size: "mEdIuM", wantSize: "Medium"},
		{drink: "tea", wantDrink: "tea", size: "Venti", wantSize: "Venti"},
	}
	for _, tt := range tests {
		t.Run(tt.drink+"/"+tt.size, func(t *testing.T) {
			g := NewWithT(t)
			var annotations map[string]string
			if tt.size != "" {
				annotations = map[string]string{examplev1beta1.SizeAnnotation: tt.size}
			}
			d := newDrink("mine", tt.drink, annotations)
			defaultDrink(d)
			g.Expect(d.Spec.Drink).To(Equal(tt.wantDrink))
			g.Expect(d.Spec.Name).To(Equal("mine"))
			if tt.size != "" {
				g.Expect(d.Annotations).To(HaveKeyWithValue(examplev1beta1.SizeAnnotation, tt.wantSize))
			} else {
				g.Expect(d.Annotations).To(BeNil())
			}
		})
	}
}
