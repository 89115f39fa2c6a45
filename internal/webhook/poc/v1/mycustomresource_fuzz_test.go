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
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
)

// FuzzMyCustomResource checks the MyCustomResource validator against
// arbitrary friend names: no panic, deterministic, accepting exactly the
// Pod names (DNS-1123 subdomains), an unchanged spec always passing an
// update. (MyCustomResource has no defaulter.) Plain `go test` runs the
// seeds; `make fuzz` explores.
func FuzzMyCustomResource(f *testing.F) {
	f.Add("funny-joe", "")
	f.Add("funny-joe", "funny-jim")
	f.Add("", "x")
	f.Add("Funny_Joe", "funny-joe")
	f.Add("a.b.c", "")
	f.Add(strings.Repeat("a", 254), "")
	f.Add("-joe-", "")
	f.Add("jöe", "joe")
	f.Fuzz(func(t *testing.T, name, oldName string) {
		obj := &pocv1.MyCustomResource{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}, Spec: pocv1.MyCustomResourceSpec{Name: name}}
		old := &pocv1.MyCustomResource{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}, Spec: pocv1.MyCustomResourceSpec{Name: oldName}}
		errs := validateMyCustomResource(obj)
		if again := validateMyCustomResource(obj); !reflect.DeepEqual(errs, again) {
			t.Fatalf("validation is not deterministic:\n%v\n%v", errs, again)
		}
		if obj.Spec.Name != name {
			t.Fatal("validation changed its input")
		}
		valid := name != "" && len(validation.IsDNS1123Subdomain(name)) == 0
		if valid != (len(errs) == 0) {
			t.Fatalf("validation of Pod name %q returned %v", name, errs)
		}
		for _, e := range errs {
			if e.Field != "spec.name" {
				t.Fatalf("error %v names %s, not spec.name", e, e.Field)
			}
		}
		v := &MyCustomResourceValidator{}
		_, err := v.ValidateCreate(context.Background(), obj)
		if (err != nil) != !valid || (err != nil && !apierrors.IsInvalid(err)) {
			t.Fatalf("ValidateCreate returned %v for rule errors %v", err, errs)
		}
		if _, err := v.ValidateUpdate(context.Background(), obj.DeepCopy(), obj); err != nil {
			t.Fatalf("an update changing nothing is rejected: %v", err)
		}
		_, err = v.ValidateUpdate(context.Background(), old, obj)
		if oldName != name && (err != nil) != !valid {
			t.Fatalf("ValidateUpdate returned %v for rule errors %v", err, errs)
		}
	})
}
