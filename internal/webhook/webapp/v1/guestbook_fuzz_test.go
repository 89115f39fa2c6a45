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

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

// FuzzGuestbook checks the Guestbook defaulter and validator against
// arbitrary specs: no panic, validation deterministic and read-only, the
// verdict on the defaulted Guestbook (what admission validates) the API
// server's (a dry-run create: the CRD's schema and CEL rules, written
// apart from the validator), a refusal an Invalid error naming fields the
// object holds, an unchanged spec always passing an update, a moved
// namespace always rejected, defaulting idempotent. Plain `go test` runs
// the seeds; `make fuzz` explores.
func FuzzGuestbook(f *testing.F) {
	f.Add(int32(3), "gb-config", "Phone", "default", "default", int32(3))
	f.Add(int32(1), "c", "", "", "", int32(0))
	f.Add(int32(0), "a-very-long-name", "Email", "team.a", "team-a", int32(2))
	f.Add(int32(11), "Conf.ig", "phone", "Team-A", "", int32(-1))
	f.Add(int32(-2147483648), "", "Address", "kube-system", "default", int32(10))
	f.Add(int32(10), "cm", "Name", "名前", "default", int32(10))
	f.Add(int32(10), "fifteen-chars-x", "Address", strings.Repeat("n", 63), "", int32(1))
	f.Add(int32(1), "sixteen-chars-xx", "", strings.Repeat("n", 64), "", int32(1))
	f.Fuzz(func(t *testing.T, size int32, cm, alias, ns, oldNs string, oldSize int32) {
		ctx := context.Background()
		// As the webhooks receive it, through JSON.
		gb := viaJSON(t, &webappv1.Guestbook{
			ObjectMeta: metav1.ObjectMeta{Name: "gb"},
			Spec: webappv1.GuestbookSpec{
				Size: size, ConfigMapName: cm, Type: webappv1.GuestbookAlias(alias), Namespace: ns,
			},
		})
		old := gb.DeepCopy()
		old.Spec.Namespace, old.Spec.Size = oldNs, oldSize
		old = viaJSON(t, old)

		defaulted := gb.DeepCopy()
		if err := (&GuestbookDefaulter{}).Default(ctx, defaulted); err != nil {
			t.Fatalf("Default: %v", err)
		}
		// The administrator lists the namespace, whatever it is: the schema
		// cannot know the system namespaces rule (TestValidatePlacement).
		v := &GuestbookValidator{SystemNamespaces: func() []string { return []string{defaulted.Spec.Namespace} }}
		before := defaulted.DeepCopy()
		_, err := v.ValidateCreate(ctx, defaulted)
		if _, again := v.ValidateCreate(ctx, defaulted); !reflect.DeepEqual(err, again) {
			t.Fatalf("validation is not deterministic:\n%v\n%v", err, again)
		}
		if !reflect.DeepEqual(before, defaulted) {
			t.Fatal("validation changed its input")
		}

		serverErr := dryRunCreate(t, defaulted)
		switch {
		case err == nil && serverErr != nil:
			t.Fatalf("the validator accepts %+v, the API server refuses it: %v", defaulted.Spec, serverErr)
		case err != nil && serverErr == nil:
			t.Fatalf("the validator refuses %+v, which the API server accepts: %v", defaulted.Spec, err)
		case err != nil:
			expectFieldsIn(t, err, defaulted)
			server := invalidFields(t, "the API server", serverErr)
			for _, field := range invalidFields(t, "the validator", err) {
				if !slices.Contains(server, field) {
					t.Fatalf("the validator refuses %s, the API server does not (it refuses %v):\n%v", field, server, err)
				}
			}
		}

		if _, err := v.ValidateUpdate(ctx, defaulted.DeepCopy(), defaulted); err != nil {
			t.Fatalf("an update changing nothing is rejected: %v", err)
		}
		_, upd := v.ValidateUpdate(ctx, old, defaulted)
		moved := old.Spec.Namespace != "" && defaulted.Spec.Namespace != old.Spec.Namespace
		switch {
		case moved && (upd == nil || !slices.Contains(invalidFields(t, "the validator", upd), "spec.namespace")):
			t.Fatalf("namespace %q -> %q: update judged %v", old.Spec.Namespace, defaulted.Spec.Namespace, upd)
		case !moved && old.Spec != defaulted.Spec && !reflect.DeepEqual(upd, err):
			t.Fatalf("an update keeping the namespace is judged %v, a create %v", upd, err)
		}

		once := gb.DeepCopy()
		defaultGuestbook(once)
		twice := once.DeepCopy()
		defaultGuestbook(twice)
		if !reflect.DeepEqual(once, twice) {
			t.Fatalf("defaulting is not idempotent: %+v then %+v", once.Spec, twice.Spec)
		}
		if once.Spec.Namespace == "" || (gb.Spec.Namespace != "" && once.Spec.Namespace != gb.Spec.Namespace) {
			t.Fatalf("namespace %q defaulted to %q", gb.Spec.Namespace, once.Spec.Namespace)
		}
		if !reflect.DeepEqual(once, defaulted) {
			t.Fatalf("the webhook defaults differently: %+v, %+v", once.Spec, defaulted.Spec)
		}
	})
}
