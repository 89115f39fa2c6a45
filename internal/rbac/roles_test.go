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

package rbac_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// aggregateTo is the label prefix the built-in admin, edit and view
// ClusterRoles aggregate by.
const aggregateTo = "rbac.authorization.k8s.io/aggregate-to-"

// caInjectionPath holds the ClusterRole of the manager's CA injection,
// not generated (internal/certs/certs.go says why).
const caInjectionPath = "config/rbac/ca_injection_role.yaml"

// writeVerbs change or remove an object.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// TestOperatorWritesOnlyItsOwnWebhookConfigurationsAndCRDs: the manager
// may change no webhook configuration or CRD but those it injects its CA
// into, and the names it may change are those of the objects the install
// paths create (dist/chart/files/generated holds `kustomize build
// config/default`'s, which the chart installs too; make verify keeps it
// current).
func TestOperatorWritesOnlyItsOwnWebhookConfigurationsAndCRDs(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	var roles []role
	for _, path := range []string{generatedPath, caInjectionPath} {
		data, err := os.ReadFile(filepath.Join(root, path))
		g.Expect(err).NotTo(HaveOccurred())
		in, err := rolesIn(path, data)
		g.Expect(err).NotTo(HaveOccurred())
		roles = append(roles, in...)
	}

	deployed := map[string][]string{}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		matches, err := filepath.Glob(filepath.Join(root, "dist/chart/files/generated", kind+"_*.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(matches).To(HaveLen(1), "one %s is deployed", kind)
		resource := strings.ToLower(kind) + "s"
		deployed[resource] = append(deployed[resource],
			strings.TrimSuffix(strings.TrimPrefix(filepath.Base(matches[0]), kind+"_"), ".yaml"))
	}
	crds, err := filepath.Glob(filepath.Join(root, "dist/chart/files/generated", "CustomResourceDefinition_*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, path := range crds {
		raw, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		var crd apiextv1.CustomResourceDefinition
		g.Expect(yaml.Unmarshal(raw, &crd)).To(Succeed())
		if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextv1.WebhookConverter {
			deployed["customresourcedefinitions"] = append(deployed["customresourcedefinitions"], crd.Name)
		}
	}
	g.Expect(deployed["customresourcedefinitions"]).To(ConsistOf("drinks.example.com"))

	writable := map[string][]string{}
	for _, r := range roles {
		for _, rule := range r.rules {
			for _, res := range rule.Resources {
				if _, guarded := deployed[res]; !guarded || !slices.ContainsFunc(rule.Verbs, func(v string) bool {
					return slices.Contains(writeVerbs, v)
				}) {
					continue
				}
				g.Expect(rule.ResourceNames).NotTo(BeEmpty(), "%s may %v every %s", r, rule.Verbs, res)
				g.Expect(rule.Verbs).To(ConsistOf("update"), "%s: the CA injection only updates %s", r, res)
				writable[res] = append(writable[res], rule.ResourceNames...)
			}
		}
	}
	for res, names := range deployed {
		g.Expect(writable[res]).To(ConsistOf(names), "the %s the manager may update are those deployed", res)
	}
}

// TestNamespacedKindsAggregateIntoBuiltInRoles: the admin, editor and viewer
// roles of a namespaced kind join the built-in roles as cert-manager's do
// (viewer into view, edit and admin; editor into edit and admin; admin into
// admin), those of a cluster-scoped kind join none, and no other role the
// project ships aggregates anywhere.
func TestNamespacedKindsAggregateIntoBuiltInRoles(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	scope := map[string]apiextv1.ResourceScope{} // by resource, e.g. applications
	crds, err := filepath.Glob(filepath.Join(root, "config/crd/bases/*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, path := range crds {
		raw, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		var crd apiextv1.CustomResourceDefinition
		g.Expect(yaml.Unmarshal(raw, &crd)).To(Succeed())
		scope[crd.Spec.Names.Plural] = crd.Spec.Scope
	}
	g.Expect(scope).To(HaveLen(5))

	want := map[string][]string{"admin": {"admin"}, "editor": {"admin", "edit"}, "viewer": {"admin", "edit", "view"}}
	checked := 0
	for _, dir := range []string{"config", "dist/chart/files"} {
		for _, r := range labelledRoles(t, filepath.Join(root, dir)) {
			var aggregates []string
			for k, v := range r.labels {
				if name, ok := strings.CutPrefix(k, aggregateTo); ok {
					g.Expect(v).To(Equal("true"), "%s: label %s", r.source, k)
					aggregates = append(aggregates, name)
				}
			}
			kind := ""
			for suffix := range want {
				if strings.HasSuffix(r.name, "-"+suffix+"-role") {
					kind = suffix
				}
			}
			if kind == "" {
				g.Expect(aggregates).To(BeEmpty(), "%s (%s) is no helper role and must not aggregate", r.name, r.source)
				continue
			}
			checked++
			namespaced := true
			for _, rule := range r.rules {
				for _, res := range rule.Resources {
					s, ok := scope[strings.SplitN(res, "/", 2)[0]]
					g.Expect(ok).To(BeTrue(), "%s: %s is none of the project's kinds", r.source, res)
					namespaced = namespaced && s == apiextv1.NamespaceScoped
				}
			}
			if namespaced {
				g.Expect(aggregates).To(ConsistOf(want[kind]), "%s (%s)", r.name, r.source)
			} else {
				g.Expect(aggregates).To(BeEmpty(), "%s (%s) is of a cluster-scoped kind", r.name, r.source)
			}
		}
	}
	// 15 in config/rbac, their 15 copies in the chart.
	g.Expect(checked).To(Equal(30))
}

// labelledRole is a ClusterRole with its labels.
type labelledRole struct {
	role
	labels map[string]string
}

// labelledRoles reads every ClusterRole under dir (Helm templates left
// out, as shippedRoles does).
func labelledRoles(t *testing.T, dir string) []labelledRole {
	t.Helper()
	root := repoRoot(t)
	var out []labelledRole
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == goldenPath {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || strings.Contains(string(data), "{{") {
			return err
		}
		docs, err := documents(data)
		if err != nil {
			return err
		}
		for _, doc := range docs {
			var obj struct {
				metav1.TypeMeta `json:",inline"`
				Metadata        metav1.ObjectMeta `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				return err
			}
			if obj.Kind != "ClusterRole" {
				continue
			}
			roles, err := rolesIn(rel, doc)
			if err != nil {
				return err
			}
			for _, r := range roles {
				out = append(out, labelledRole{role: r, labels: obj.Metadata.Labels})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
