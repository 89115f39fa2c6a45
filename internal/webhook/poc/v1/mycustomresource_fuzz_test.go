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
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
)

// FuzzMyCustomResource checks the MyCustomResource validator against
// arbitrary friend names: no panic, deterministic and read-only, its
// verdict the API server's (a dry-run create: the CRD's schema, the only
// independent statement of a valid friend name), a refusal an Invalid
// error naming fields the object holds, an unchanged spec always passing
// an update, a changed one judged as a create. (MyCustomResource has no
// defaulter.) Plain `go test` runs the seeds; `make fuzz` explores.
func FuzzMyCustomResource(f *testing.F) {
	f.Add("funny-joe", "")
	f.Add("funny-joe", "funny-jim")
	f.Add("", "x")
	f.Add("Funny_Joe", "funny-joe")
	f.Add("a.b.c", "")
	f.Add(strings.Repeat("a", 253), "")
	f.Add(strings.Repeat("a", 254), "")
	f.Add("-joe-", "")
	f.Add("jöe", "joe")
	f.Add("a..b", "\xff")
	f.Fuzz(func(t *testing.T, name, oldName string) {
		// As the webhook receives it, through JSON.
		obj := viaJSON(t, &pocv1.MyCustomResource{
			ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: fuzzNamespace},
			Spec:       pocv1.MyCustomResourceSpec{Name: name},
		})
		old := viaJSON(t, &pocv1.MyCustomResource{
			ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: fuzzNamespace},
			Spec:       pocv1.MyCustomResourceSpec{Name: oldName},
		})
		before := obj.DeepCopy()
		v := &MyCustomResourceValidator{}
		ctx := context.Background()
		_, err := v.ValidateCreate(ctx, obj)
		if _, again := v.ValidateCreate(ctx, obj); !reflect.DeepEqual(err, again) {
			t.Fatalf("validation is not deterministic:\n%v\n%v", err, again)
		}
		if !reflect.DeepEqual(before, obj) {
			t.Fatal("validation changed its input")
		}

		serverErr := dryRunCreate(t, obj)
		switch {
		case err == nil && serverErr != nil:
			t.Fatalf("the validator accepts friend name %q, the API server refuses it: %v", obj.Spec.Name, serverErr)
		case err != nil && serverErr == nil:
			t.Fatalf("the validator refuses friend name %q, which the API server accepts: %v", obj.Spec.Name, err)
		case err != nil:
			expectFieldsIn(t, err, obj)
			fields := invalidFields(t, "the validator", err)
			if !slices.Contains(invalidFields(t, "the API server", serverErr), fields[0]) {
				t.Fatalf("the validator refuses %v, the API server %v", err, serverErr)
			}
		}

		if _, err := v.ValidateUpdate(ctx, obj.DeepCopy(), obj); err != nil {
			t.Fatalf("an update changing nothing is rejected: %v", err)
		}
		if _, upd := v.ValidateUpdate(ctx, old, obj); old.Spec != obj.Spec && !reflect.DeepEqual(upd, err) {
			t.Fatalf("an update to friend name %q is judged %v, a create %v", obj.Spec.Name, upd, err)
		}
	})
}
