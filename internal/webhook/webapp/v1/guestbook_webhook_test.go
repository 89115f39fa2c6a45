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
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

func validGuestbook() *webappv1.Guestbook {
	return &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: "gb"},
		Spec: webappv1.GuestbookSpec{
			Size: 2, ConfigMapName: "gb-config", Type: webappv1.AliasPhone, Namespace: "team-a",
		},
	}
}

// fieldErr is the part of a field.Error a test checks.
type fieldErr struct {
	Type  field.ErrorType
	Field string
}

func fieldErrs(errs field.ErrorList) []fieldErr {
	if len(errs) == 0 {
		return nil
	}
	out := make([]fieldErr, 0, len(errs))
	for _, e := range errs {
		out = append(out, fieldErr{Type: e.Type, Field: e.Field})
	}
	return out
}

func TestValidateGuestbook(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*webappv1.GuestbookSpec)
		want   []fieldErr
	}{
		{name: "valid"},
		{name: "no alias", mutate: func(s *webappv1.GuestbookSpec) { s.Type = "" }},
		{name: "size 10", mutate: func(s *webappv1.GuestbookSpec) { s.Size = 10 }},
		{name: "size 0", mutate: func(s *webappv1.GuestbookSpec) { s.Size = 0 },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.size"}}},
		{name: "size 11", mutate: func(s *webappv1.GuestbookSpec) { s.Size = 11 },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.size"}}},
		{name: "no configMapName", mutate: func(s *webappv1.GuestbookSpec) { s.ConfigMapName = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.configMapName"}}},
		{name: "configMapName too long", mutate: func(s *webappv1.GuestbookSpec) { s.ConfigMapName = "a-very-long-name" },
			want: []fieldErr{{field.ErrorTypeTooLong, "spec.configMapName"}}},
		{name: "configMapName not a DNS label", mutate: func(s *webappv1.GuestbookSpec) { s.ConfigMapName = "Conf.ig" },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.configMapName"}}},
		{name: "unknown alias", mutate: func(s *webappv1.GuestbookSpec) { s.Type = "Email" },
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.alias"}}},
		{name: "no namespace", mutate: func(s *webappv1.GuestbookSpec) { s.Namespace = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.namespace"}}},
		{name: "namespace not a DNS label", mutate: func(s *webappv1.GuestbookSpec) { s.Namespace = "team.a" },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.namespace"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gb := validGuestbook()
			if tt.mutate != nil {
				tt.mutate(&gb.Spec)
			}
			NewWithT(t).Expect(fieldErrs(validateGuestbook(gb))).To(Equal(tt.want))
		})
	}
}

func TestValidateGuestbookUpdate(t *testing.T) {
	g := NewWithT(t)
	old := validGuestbook()
	moved := validGuestbook()
	moved.Spec.Namespace = "team-b"
	g.Expect(fieldErrs(validateGuestbookUpdate(old, moved))).To(Equal([]fieldErr{{field.ErrorTypeInvalid, "spec.namespace"}}))

	resized := validGuestbook()
	resized.Spec.Size = 3
	g.Expect(validateGuestbookUpdate(old, resized)).To(BeEmpty())

	legacy := validGuestbook()
	legacy.Spec.ConfigMapName = "a-very-long-name" // stored before the rule existed
	relabelled := legacy.DeepCopy()
	relabelled.Labels = map[string]string{"team": "a"}
	g.Expect(validateGuestbookUpdate(legacy, relabelled)).To(BeEmpty(), "an unchanged spec passes")
}

func TestValidatePlacement(t *testing.T) {
	for _, tc := range []struct {
		name, namespace string
		allowed         []string
		want            []fieldErr
	}{
		{name: "an ordinary namespace", namespace: "team-a"},
		{name: "kube-system, nothing listed", namespace: "kube-system",
			want: []fieldErr{{field.ErrorTypeForbidden, "spec.namespace"}}},
		{name: "kube-public, kube-system listed", namespace: "kube-public", allowed: []string{"kube-system"},
			want: []fieldErr{{field.ErrorTypeForbidden, "spec.namespace"}}},
		{name: "kube-system listed", namespace: "kube-system", allowed: []string{"kube-system"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			gb := validGuestbook()
			gb.Spec.Namespace = tc.namespace
			errs := validatePlacement(gb, tc.allowed)
			g.Expect(fieldErrs(errs)).To(Equal(tc.want))
			if len(errs) > 0 {
				g.Expect(errs.ToAggregate().Error()).To(ContainSubstring(
					"spec.namespace: Forbidden: " + tc.namespace + " is a system namespace"))
				g.Expect(errs.ToAggregate().Error()).To(ContainSubstring("spec.guestbookSystemNamespaces"),
					"the message says how to allow it")
			}
		})
	}
}

// TestSystemNamespaceRuleOnUpdate: a Guestbook stored in kube-system before
// the rule keeps its metadata writable (and so its deletion through
// finalizers), but not its spec.
func TestSystemNamespaceRuleOnUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	v := &GuestbookValidator{}
	stored := validGuestbook()
	stored.Spec.Namespace = "kube-system"

	relabelled := stored.DeepCopy()
	relabelled.Labels = map[string]string{"team": "a"}
	_, err := v.ValidateUpdate(ctx, stored, relabelled)
	g.Expect(err).NotTo(HaveOccurred(), "an unchanged spec passes")

	resized := stored.DeepCopy()
	resized.Spec.Size = 3
	_, err = v.ValidateUpdate(ctx, stored, resized)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.guestbookSystemNamespaces"))

	v.SystemNamespaces = func() []string { return []string{"kube-system"} }
	_, err = v.ValidateUpdate(ctx, stored, resized)
	g.Expect(err).NotTo(HaveOccurred(), "listed")
}

func TestDefaultGuestbook(t *testing.T) {
	g := NewWithT(t)
	gb := validGuestbook()
	gb.Spec.Namespace = ""
	defaultGuestbook(gb)
	g.Expect(gb.Spec.Namespace).To(Equal(webappv1.DefaultNamespace))

	gb.Spec.Namespace = "team-a"
	defaultGuestbook(gb)
	g.Expect(gb.Spec.Namespace).To(Equal("team-a"))
}
