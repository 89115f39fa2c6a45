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

package v1_test

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
)

// roundTrips is the number of random objects each round trip is tried with.
const roundTrips = 1500

// spoke describes an older version of Drink for the round-trip tests.
type spoke struct {
	name string
	// new returns an empty Drink of this version.
	new func() conversion.Convertible
	// reserved is the annotation this version's conversion owns on its own
	// objects: the fuzzer never sets it there (see docs/drink-versions.md).
	reserved string
	// hubReserved is the annotation this version's conversion owns on v1
	// objects, never set there by the fuzzer either.
	hubReserved string
}

var spokes = []spoke{
	{
		name:        "v1alpha1",
		new:         func() conversion.Convertible { return &examplev1alpha1.Drink{} },
		reserved:    examplev1alpha1.SpecAnnotation,
		hubReserved: examplev1alpha1.SpecAnnotation,
	},
	{
		name:     "v1beta1",
		new:      func() conversion.Convertible { return &examplev1beta1.Drink{} },
		reserved: examplev1beta1.SizeAnnotation,
	},
}

// newFiller returns a deterministic fuzzer filling metadata the way the
// API machinery's own round-trip tests do, and specs with the cases the
// conversions must get right.
func newFiller(seed int64) *randfill.Filler {
	funcs := fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, drinkFuzzerFuncs)
	return fuzzer.FuzzerFor(funcs, rand.NewSource(seed), serializer.NewCodecFactory(runtime.NewScheme()))
}

func drinkFuzzerFuncs(serializer.CodecFactory) []any {
	return []any{
		func(s *examplev1.DrinkSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if c.Intn(3) == 0 {
				// A drink v1alpha1's order cannot tell from the name.
				s.Drink += " for " + c.String(0)
			}
		},
		func(s *examplev1alpha1.DrinkSpec, c randfill.Continue) {
			// An order the API server accepts holds " for ".
			s.Order = examplev1alpha1.FormatOrder(c.String(0), c.String(0))
		},
		func(d *examplev1.Drink, c randfill.Continue) {
			c.FillNoCustom(d)
			if c.Intn(2) == 0 {
				// A v1 Drink written as v1beta1 with a size; any value,
				// empty included, must survive.
				if d.Annotations == nil {
					d.Annotations = map[string]string{}
				}
				d.Annotations[examplev1beta1.SizeAnnotation] = []string{"", "Large", c.String(0)}[c.Intn(3)]
			}
		},
	}
}

// TestDrinkHubSpokeHub converts random v1 Drinks to each older version and
// back, and expects them unchanged.
func TestDrinkHubSpokeHub(t *testing.T) {
	for _, s := range spokes {
		t.Run(s.name, func(t *testing.T) {
			f := newFiller(1)
			for i := range roundTrips {
				hub := &examplev1.Drink{}
				f.Fill(hub)
				hub.TypeMeta = metav1.TypeMeta{}
				delete(hub.Annotations, s.hubReserved)
				if err := hubSpokeHub(hub, s.new()); err != nil {
					t.Fatalf("round trip %d: %v", i, err)
				}
			}
		})
	}
}

// TestDrinkSpokeHubSpoke converts random Drinks of each older version to
// v1 and back, and expects them unchanged.
func TestDrinkSpokeHubSpoke(t *testing.T) {
	for _, s := range spokes {
		t.Run(s.name, func(t *testing.T) {
			f := newFiller(2)
			for i := range roundTrips {
				in := s.new()
				f.Fill(in)
				meta := in.(metav1.ObjectMetaAccessor).GetObjectMeta()
				annotations := meta.GetAnnotations()
				delete(annotations, s.reserved)
				meta.SetAnnotations(annotations)
				in.GetObjectKind().SetGroupVersionKind(runtimeEmptyGVK)
				if err := spokeHubSpoke(in, s.new()); err != nil {
					t.Fatalf("round trip %d: %v", i, err)
				}
			}
		})
	}
}

// FuzzDrinkConversion checks every conversion round trip of Drinks built
// from its inputs. Plain `go test` runs its seeds; `go test -fuzz
// FuzzDrinkConversion ./api/example/v1` explores further.
func FuzzDrinkConversion(f *testing.F) {
	f.Add("my-drink", "coffee", "Large")
	f.Add("Table for two", "green tea", "")
	f.Add("bob", "tea for two", "Small")
	f.Add("", "", "")
	f.Add(" for ", " for ", "huge")
	f.Add("for", "tea for", "\x00")
	f.Add(strings.Repeat("n", 253), strings.Repeat("d", 253), "Medium")
	f.Fuzz(func(t *testing.T, name, drink, size string) {
		if !utf8.ValidString(name) || !utf8.ValidString(drink) || !utf8.ValidString(size) {
			return // API strings are UTF-8: JSON cannot carry anything else.
		}
		hub := &examplev1.Drink{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Annotations: map[string]string{examplev1beta1.SizeAnnotation: size}},
			Spec:       examplev1.DrinkSpec{Name: name, Drink: drink},
		}
		for _, s := range spokes {
			if err := hubSpokeHub(hub, s.new()); err != nil {
				t.Errorf("v1 -> %s -> v1: %v", s.name, err)
			}
		}
		alpha := &examplev1alpha1.Drink{Spec: examplev1alpha1.DrinkSpec{Order: examplev1alpha1.FormatOrder(drink, name)}}
		if err := spokeHubSpoke(alpha, &examplev1alpha1.Drink{}); err != nil {
			t.Errorf("v1alpha1 -> v1 -> v1alpha1: %v", err)
		}
		beta := &examplev1beta1.Drink{Spec: examplev1beta1.DrinkSpec{
			Name:  name,
			Drink: examplev1beta1.DrinkDetails{Kind: drink, Size: examplev1beta1.DrinkSize(size)},
		}}
		if err := spokeHubSpoke(beta, &examplev1beta1.Drink{}); err != nil {
			t.Errorf("v1beta1 -> v1 -> v1beta1: %v", err)
		}
	})
}
