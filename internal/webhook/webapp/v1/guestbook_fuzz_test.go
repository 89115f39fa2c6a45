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
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

// FuzzGuestbook checks the Guestbook defaulter and validator against
// arbitrary specs: no panic, validation deterministic and read-only, an
// unchanged spec always passing an update, a moved namespace always
// rejected, defaulting idempotent. Plain `go test` runs the seeds;
// `make fuzz` explores.
func FuzzGuestbook(f *testing.F) {
	f.Add(int32(3), "gb-config", "Phone", "default", "default", int32(3))
	f.Add(int32(1), "c", "", "", "", int32(0))
	f.Add(int32(0), "a-very-long-name", "Email", "team.a", "team-a", int32(2))
	f.Add(int32(11), "Conf.ig", "phone", "Team-A", "", int32(-1))
	f.Add(int32(-2147483648), "", "Address", "kube-system", "default", int32(10))
	f.Add(int32(10), "cm", "Name", "名前", "default", int32(10))
	f.Fuzz(func(t *testing.T, size int32, cm, alias, ns, oldNs string, oldSize int32) {
		gb := &webappv1.Guestbook{
			ObjectMeta: metav1.ObjectMeta{Name: "gb"},
			Spec: webappv1.GuestbookSpec{
				Size: size, ConfigMapName: cm, Type: webappv1.GuestbookAlias(alias), Namespace: ns,
			},
		}
		old := gb.DeepCopy()
		old.Spec.Namespace, old.Spec.Size = oldNs, oldSize

		before := gb.DeepCopy()
		errs := validateGuestbook(gb)
		if again := validateGuestbook(gb); !reflect.DeepEqual(errs, again) {
			t.Fatalf("validation is not deterministic:\n%v\n%v", errs, again)
		}
		if !reflect.DeepEqual(before, gb) {
			t.Fatal("validation changed its input")
		}
		if same := validateGuestbookUpdate(gb, gb.DeepCopy()); len(same) > 0 {
			t.Fatalf("an update changing nothing is rejected: %v", same)
		}
		upd := validateGuestbookUpdate(old, gb)
		moved := oldNs != "" && ns != oldNs
		if moved != hasError(upd, field.ErrorTypeInvalid, "spec.namespace", msgImmutable) {
			t.Fatalf("namespace %q -> %q: update errors %v", oldNs, ns, upd)
		}
		_, err := (&GuestbookValidator{}).ValidateCreate(context.Background(), gb)
		if (err != nil) != (len(errs) > 0) || (err != nil && !apierrors.IsInvalid(err)) {
			t.Fatalf("ValidateCreate returned %v for rule errors %v", err, errs)
		}

		once := gb.DeepCopy()
		defaultGuestbook(once)
		twice := once.DeepCopy()
		defaultGuestbook(twice)
		if !reflect.DeepEqual(once, twice) {
			t.Fatalf("defaulting is not idempotent: %+v then %+v", once.Spec, twice.Spec)
		}
		if once.Spec.Namespace == "" || (ns != "" && once.Spec.Namespace != ns) {
			t.Fatalf("namespace %q defaulted to %q", ns, once.Spec.Namespace)
		}
		viaWebhook := gb.DeepCopy()
		if err := (&GuestbookDefaulter{}).Default(context.Background(), viaWebhook); err != nil {
			t.Fatalf("Default: %v", err)
		}
		if !reflect.DeepEqual(once, viaWebhook) {
			t.Fatalf("the webhook defaults differently: %+v, %+v", once.Spec, viaWebhook.Spec)
		}
	})
}

func hasError(errs field.ErrorList, typ field.ErrorType, path, detail string) bool {
	for _, e := range errs {
		if e.Type == typ && e.Field == path && e.Detail == detail {
			return true
		}
	}
	return false
}
