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
	"k8s.io/apimachinery/pkg/util/validation/field"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
)

func TestValidateMyCustomResource(t *testing.T) {
	tests := []struct {
		name     string
		podName  string
		wantType field.ErrorType
	}{
		{name: "simple", podName: "nginx"},
		{name: "subdomain", podName: "web-0.web.default"},
		{name: "longest", podName: strings.Repeat("a", 253)},
		{name: "empty", podName: "", wantType: field.ErrorTypeRequired},
		{name: "upper case", podName: "Nginx", wantType: field.ErrorTypeInvalid},
		{name: "underscore", podName: "my_pod", wantType: field.ErrorTypeInvalid},
		{name: "surrounding space", podName: " nginx ", wantType: field.ErrorTypeInvalid},
		{name: "trailing dash", podName: "nginx-", wantType: field.ErrorTypeInvalid},
		{name: "too long", podName: strings.Repeat("a", 254), wantType: field.ErrorTypeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			errs := validateMyCustomResource(&pocv1.MyCustomResource{Spec: pocv1.MyCustomResourceSpec{Name: tt.podName}})
			if tt.wantType == "" {
				g.Expect(errs).To(BeEmpty())
				return
			}
			g.Expect(errs).NotTo(BeEmpty())
			for _, e := range errs {
				g.Expect(e.Type).To(Equal(tt.wantType))
				g.Expect(e.Field).To(Equal("spec.name"))
			}
		})
	}
}
