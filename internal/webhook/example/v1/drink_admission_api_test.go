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
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	"sunstrider.cn/operator/internal/testutil"
)

// TestDrinkInvalidRejected creates invalid Drinks in every version and
// expects each rejected, with the field and the rule in the error, and
// none stored. Some rules are caught by the CRD schema, one only by the
// validating webhook (the size annotation).
func TestDrinkInvalidRejected(t *testing.T) {
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	v1 := func(name, drink string) *examplev1.Drink {
		return &examplev1.Drink{Spec: examplev1.DrinkSpec{Name: name, Drink: drink}}
	}
	tests := []struct {
		name      string
		drink     client.Object
		wantField string
		wantMsg   string
	}{
		{name: "v1 empty name", drink: v1("", "coffee"),
			wantField: "spec.name", wantMsg: "should be at least 1 chars long"},
		{name: "v1 name too long", drink: v1(strings.Repeat("n", 254), "coffee"),
			wantField: "spec.name", wantMsg: "Too long"},
		{name: "v1 name with a control character", drink: v1("bad\nname", "coffee"),
			wantField: "spec.name", wantMsg: examplev1.NameControlMessage},
		{name: "v1 drink with punctuation", drink: v1("mine", "tea!"),
			wantField: "spec.drink", wantMsg: examplev1.DrinkMessage},
		{name: "v1 drink not in a-z", drink: v1("mine", "Café au lait"),
			wantField: "spec.drink", wantMsg: examplev1.DrinkMessage},
		{name: "v1 size annotation not a size", drink: func() client.Object {
			d := v1("mine", "coffee")
			d.Annotations = map[string]string{examplev1beta1.SizeAnnotation: "Huge"}
			return d
		}(), wantField: "metadata.annotations[" + examplev1beta1.SizeAnnotation + "]", wantMsg: `Unsupported value: "Huge"`},
		{name: "v1alpha1 order without for", drink: &examplev1alpha1.Drink{Spec: examplev1alpha1.DrinkSpec{Order: "just coffee"}},
			wantField: "spec.order", wantMsg: "order must read '<drink> for <name>'"},
		{name: "v1alpha1 order with a name too long", drink: &examplev1alpha1.Drink{
			Spec: examplev1alpha1.DrinkSpec{Order: "coffee for " + strings.Repeat("n", 254)}},
			wantField: "spec.order", wantMsg: "must each be at most 253 characters"},
		{name: "v1beta1 size not a size", drink: &examplev1beta1.Drink{Spec: examplev1beta1.DrinkSpec{
			Name: "mine", Drink: examplev1beta1.DrinkDetails{Kind: "tea", Size: "Huge"}}},
			wantField: "spec.drink.size", wantMsg: `Unsupported value: "Huge"`},
		{name: "v1beta1 kind with punctuation", drink: &examplev1beta1.Drink{Spec: examplev1beta1.DrinkSpec{
			Name: "mine", Drink: examplev1beta1.DrinkDetails{Kind: "tea?"}}},
			wantField: "spec.drink.kind", wantMsg: examplev1.DrinkMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newG(t)
			tt.drink.SetNamespace(ns)
			tt.drink.SetName("invalid")
			err := k8sClient.Create(ctx, tt.drink)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.wantField + ": "))
			g.Expect(err.Error()).To(ContainSubstring(tt.wantMsg))
			err = k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "invalid"}, &examplev1.Drink{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "stored: %v", err)
		})
	}
}

// TestDrinkInvalidUpdateRejected expects the validating webhook to reject
// an update breaking a rule only it knows, and to let an update leaving
// the broken field alone pass.
func TestDrinkInvalidUpdateRejected(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	drink := &examplev1.Drink{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "update"},
		Spec:       examplev1.DrinkSpec{Name: "mine", Drink: "coffee"},
	}
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	drink.Annotations = map[string]string{examplev1beta1.SizeAnnotation: "Venti"}
	err := k8sClient.Update(ctx, drink)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`vdrink-v1.example.com`))
	g.Expect(err.Error()).To(ContainSubstring(`Unsupported value: "Venti"`))
}

// TestDrinkDefaulting creates and updates Drinks in every version with a
// drink to normalise and expects it normalised in storage.
func TestDrinkDefaulting(t *testing.T) {
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	tests := []struct {
		name      string
		drink     client.Object
		wantDrink string
		wantSize  string
	}{
		{name: "v1", drink: &examplev1.Drink{Spec: examplev1.DrinkSpec{Name: "mine", Drink: "  Green   TEA "}},
			wantDrink: "green tea"},
		{name: "v1 size annotation", drink: &examplev1.Drink{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{examplev1beta1.SizeAnnotation: "large"}},
			Spec:       examplev1.DrinkSpec{Name: "mine", Drink: "coffee"}},
			wantDrink: "coffee", wantSize: "Large"},
		{name: "v1alpha1", drink: &examplev1alpha1.Drink{Spec: examplev1alpha1.DrinkSpec{Order: "Hot  Cocoa for kids"}},
			wantDrink: "hot cocoa"},
		{name: "v1beta1", drink: &examplev1beta1.Drink{Spec: examplev1beta1.DrinkSpec{
			Name: "mine", Drink: examplev1beta1.DrinkDetails{Kind: "ESPRESSO", Size: examplev1beta1.SizeMedium}}},
			wantDrink: "espresso", wantSize: "Medium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newG(t)
			tt.drink.SetNamespace(ns)
			tt.drink.SetName(strings.ReplaceAll(tt.name, " ", "-"))
			g.Expect(k8sClient.Create(ctx, tt.drink)).To(Succeed())
			var hub examplev1.Drink
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tt.drink), &hub)).To(Succeed())
			g.Expect(hub.Spec.Drink).To(Equal(tt.wantDrink))
			if tt.wantSize != "" {
				g.Expect(hub.Annotations).To(HaveKeyWithValue(examplev1beta1.SizeAnnotation, tt.wantSize))
			}

			hub.Spec.Drink = "Iced MOCHA"
			g.Expect(k8sClient.Update(ctx, &hub)).To(Succeed())
			g.Expect(hub.Spec.Drink).To(Equal("iced mocha"), "defaulted on update")
		})
	}
}
