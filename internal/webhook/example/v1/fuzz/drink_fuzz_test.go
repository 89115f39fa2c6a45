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

// Package fuzz_test fuzzes the Drink webhooks of
// sunstrider.cn/operator/internal/webhook/example/v1 through their exported
// Defaulter and Validator. It lives apart from that package because the
// package's TestMain starts envtest, which `go test -fuzz` would start
// again in every fuzz worker (and hang on).
package fuzz_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	webhookv1 "sunstrider.cn/operator/internal/webhook/example/v1"
)

// FuzzDrink checks the Drink defaulter and validator against arbitrary
// names, drinks and sizes: no panic, validation deterministic and
// read-only, an update never rejecting more than a create of the same
// Drink nor anything when nothing changes, defaulting idempotent and
// leaving a normalised drink, every rejection an Invalid error naming its
// fields. Plain `go test` runs the seeds; `make fuzz` explores.
func FuzzDrink(f *testing.F) {
	f.Add("my-drink", "coffee", "Large", true, "my-drink", "tea", "")
	f.Add("Table for two", "  Green  TEA ", "large", true, "", "", "Small")
	f.Add("bob", "tea for two", "", false, "bob", "tea for two", "Medium")
	f.Add("", "", "huge", true, "x", "x", "Huge")
	f.Add("tab\there", "Café au lait", "ſmall", true, "", "coffee", "")
	f.Add(strings.Repeat("n", 254), strings.Repeat("d", 254), "Medium", true, "", "", "")
	f.Add("\u202eevil", "İstanbul tea", "LARGE", true, "a", "b", "Large")
	f.Fuzz(func(t *testing.T, name, drink, size string, hasSize bool, oldName, oldDrink, oldSize string) {
		d := &examplev1.Drink{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
			Spec:       examplev1.DrinkSpec{Name: name, Drink: drink},
		}
		if hasSize {
			d.Annotations = map[string]string{examplev1beta1.SizeAnnotation: size}
		}
		old := &examplev1.Drink{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
			Spec:       examplev1.DrinkSpec{Name: oldName, Drink: oldDrink},
		}
		if oldSize != "" {
			old.Annotations = map[string]string{examplev1beta1.SizeAnnotation: oldSize}
		}
		checkDrinkValidation(t, d, old)
		checkDrinkDefaulting(t, d)
	})
}

var validator = &webhookv1.DrinkValidator{}

func checkDrinkValidation(t *testing.T, d, old *examplev1.Drink) {
	t.Helper()
	ctx := context.Background()
	before := d.DeepCopy()
	_, err := validator.ValidateCreate(ctx, d)
	errs := causes(t, err)
	_, again := validator.ValidateCreate(ctx, d)
	if !slices.Equal(errs, causes(t, again)) {
		t.Fatalf("validation is not deterministic:\n%v\n%v", err, again)
	}
	if !equality.Semantic.DeepEqual(before, d) {
		t.Fatalf("validation changed its input:\n%s", diff.Diff(before, d))
	}
	if _, err := validator.ValidateUpdate(ctx, d.DeepCopy(), d); err != nil {
		t.Fatalf("an update changing nothing is rejected: %v", err)
	}
	_, err = validator.ValidateUpdate(ctx, old, d)
	for _, e := range causes(t, err) {
		if !slices.Contains(errs, e) {
			t.Fatalf("an update is rejected for %s, which a create of the same Drink is not (%v)", e, errs)
		}
	}
}

// causes returns the field errors of err, an Invalid error or nil, as
// "field: message" strings.
func causes(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("the webhook rejected with %v, not an Invalid error", err)
	}
	var out []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	if len(out) == 0 {
		t.Fatalf("Invalid error %v names no field", err)
	}
	return out
}

func checkDrinkDefaulting(t *testing.T, d *examplev1.Drink) {
	t.Helper()
	defaulter := &webhookv1.DrinkDefaulter{}
	once := d.DeepCopy()
	if err := defaulter.Default(context.Background(), once); err != nil {
		t.Fatalf("Default: %v", err)
	}
	twice := once.DeepCopy()
	if err := defaulter.Default(context.Background(), twice); err != nil {
		t.Fatalf("Default: %v", err)
	}
	if !equality.Semantic.DeepEqual(once, twice) {
		t.Fatalf("defaulting is not idempotent (-once +twice):\n%s", diff.Diff(once, twice))
	}
	if k := once.Spec.Drink; k != strings.TrimSpace(k) || strings.Contains(k, "  ") {
		t.Fatalf("defaulted drink %q is not normalised", k)
	}
	if once.Spec.Name != d.Spec.Name {
		t.Fatalf("defaulting changed spec.name from %q to %q", d.Spec.Name, once.Spec.Name)
	}
}
