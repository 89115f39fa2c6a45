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
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	examplev1 "sunstrider.cn/operator/api/example/v1"
)

// TestCRDValidationMessages checks the CEL rules of the generated CRD use
// the patterns and messages the webhook uses, so both reject alike.
func TestCRDValidationMessages(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "example.com_drinks.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var crd apiextensionsv1.CustomResourceDefinition
	g.Expect(yaml.Unmarshal(data, &crd)).To(Succeed())

	versions := map[string]apiextensionsv1.CustomResourceDefinitionVersion{}
	for _, v := range crd.Spec.Versions {
		versions[v.Name] = v
	}
	g.Expect(versions).To(HaveLen(3))
	g.Expect(versions["v1"].Storage).To(BeTrue())

	spec := versions["v1"].Schema.OpenAPIV3Schema.Properties["spec"]
	name := spec.Properties["name"]
	g.Expect(name.MaxLength).To(HaveValue(BeEquivalentTo(examplev1.MaxNameLength)))
	g.Expect(name.XValidations).To(ContainElement(And(
		HaveField("Rule", ContainSubstring(examplev1.NameControlPattern)),
		HaveField("Message", examplev1.NameControlMessage))))
	drink := spec.Properties["drink"]
	g.Expect(drink.MaxLength).To(HaveValue(BeEquivalentTo(examplev1.MaxDrinkLength)))
	g.Expect(drink.XValidations).To(ContainElement(And(
		HaveField("Rule", ContainSubstring(examplev1.DrinkPattern)),
		HaveField("Message", examplev1.DrinkMessage))))

	// The older versions hold the same drink form.
	for _, v := range []string{"v1alpha1", "v1beta1"} {
		g.Expect(string(mustYAML(g, versions[v]))).To(ContainSubstring(examplev1.DrinkPattern), v)
	}
}

func mustYAML(g Gomega, v any) []byte {
	data, err := yaml.Marshal(v)
	g.Expect(err).NotTo(HaveOccurred())
	return data
}
