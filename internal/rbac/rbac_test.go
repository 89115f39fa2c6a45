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

// Package rbac_test guards the operator's permissions without a cluster:
// the RBAC controller-gen generates must equal a reviewed golden copy, and
// every Role and ClusterRole the project ships (config/**, the Helm chart's
// generated files) must keep to least privilege.
package rbac_test

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"sunstrider.cn/operator/internal/testutil"
)

var update = flag.Bool("update", false, "copy config/rbac/role.yaml into config/rbac/role.golden.yaml, keeping its header")

const (
	generatedPath = "config/rbac/role.yaml"
	goldenPath    = "config/rbac/role.golden.yaml"
)

// role is a Role or ClusterRole read from a manifest.
type role struct {
	source string // file it comes from
	kind   string
	name   string
	rules  []rbacv1.PolicyRule
}

func (r role) String() string { return fmt.Sprintf("%s %s (%s)", r.kind, r.name, r.source) }

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestGeneratedRBACMatchesReviewedGolden fails when the markers grant the
// operator anything the reviewed golden file does not.
func TestGeneratedRBACMatchesReviewedGolden(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	generated, err := os.ReadFile(filepath.Join(root, generatedPath))
	g.Expect(err).NotTo(HaveOccurred())
	golden, err := os.ReadFile(filepath.Join(root, goldenPath))
	g.Expect(err).NotTo(HaveOccurred(), "the reviewed copy of %s is missing", generatedPath)

	header := goldenHeader(golden)
	g.Expect(header).To(ContainSubstring("REVIEWED"), "%s must start with its review header", goldenPath)
	if *update {
		g.Expect(os.WriteFile(filepath.Join(root, goldenPath), append([]byte(header), generated...), 0o644)).To(Succeed())
		t.Logf("updated %s: have the change reviewed", goldenPath)
		return
	}

	want, got := canonical(t, golden), canonical(t, generated)
	if want != got {
		t.Fatalf("%s differs from the reviewed %s (-reviewed +generated):\n%s\n"+
			"Review the change of permissions, then update the golden file with\n"+
			"  go test ./internal/rbac -run TestGeneratedRBACMatchesReviewedGolden -args -update",
			generatedPath, goldenPath, lineDiff(want, got))
	}
}

// lineDiff returns the lines only in a (prefixed "-") or only in b ("+"),
// in order, with two lines of context: a longest-common-subsequence diff,
// fine for files of a few hundred lines.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := range slices.Backward(x) {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var lines []string
	for i, j := 0, 0; i < len(x) || j < len(y); {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			lines = append(lines, "  "+x[i])
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			lines = append(lines, "+ "+y[j])
			j++
		default:
			lines = append(lines, "- "+x[i])
			i++
		}
	}
	var out []string
	for k, l := range lines {
		near := false
		for d := max(0, k-2); d <= min(len(lines)-1, k+2); d++ {
			near = near || !strings.HasPrefix(lines[d], "  ")
		}
		if near {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// goldenHeader returns the leading comment lines of the golden file.
func goldenHeader(data []byte) string {
	var b strings.Builder
	for line := range strings.Lines(string(data)) {
		if !strings.HasPrefix(line, "#") {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// canonical renders every object of a multi-document YAML file in one
// form (sorted keys, no comments), so that only a change of meaning shows.
func canonical(t *testing.T, data []byte) string {
	t.Helper()
	docs, err := documents(data)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(docs))
	for _, doc := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		text, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(text))
	}
	return strings.Join(out, "---\n")
}

// documents splits a multi-document YAML file, dropping empty documents.
func documents(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			b.Write(line)
		}
	}
	return b.Bytes()
}

// shippedRoles reads every Role and ClusterRole in the project's plain
// manifests: config/** (what `kustomize build config/default` and its
// optional components assemble) and the Helm chart's generated copies.
// Helm templates (holding "{{") are left out: they read the generated
// copies.
func shippedRoles(t *testing.T, root string) []role {
	t.Helper()
	var roles []role
	for _, dir := range []string{"config", "dist/chart/files"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if rel == goldenPath {
				return nil // a reviewed copy of role.yaml, not deployed
			}
			data, err := os.ReadFile(path)
			if err != nil || bytes.Contains(data, []byte("{{")) {
				return err
			}
			found, err := rolesIn(rel, data)
			roles = append(roles, found...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return roles
}

func rolesIn(source string, data []byte) ([]role, error) {
	docs, err := documents(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var roles []role
	for _, doc := range docs {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if tm.APIVersion != rbacv1.SchemeGroupVersion.String() || (tm.Kind != "Role" && tm.Kind != "ClusterRole") {
			continue
		}
		var obj rbacv1.ClusterRole // a Role has the same fields but aggregationRule
		if err := yaml.UnmarshalStrict(doc, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		roles = append(roles, role{source: source, kind: tm.Kind, name: obj.Name, rules: obj.Rules})
	}
	return roles, nil
}

// forbiddenVerbs let a subject grant or assume more than it has.
var forbiddenVerbs = []string{"escalate", "bind", "impersonate"}

// forbiddenResources give a way around RBAC: running commands in Pods,
// minting tokens, talking to kubelets.
var forbiddenResources = []string{"pods/exec", "pods/attach", "pods/portforward", "serviceaccounts/token", "nodes/proxy"}

// violations returns the least-privilege rules r breaks.
func violations(r role) []string {
	var out []string
	for i, rule := range r.rules {
		at := fmt.Sprintf("%s rule %d", r, i)
		for field, values := range map[string][]string{
			"verbs": rule.Verbs, "apiGroups": rule.APIGroups, "resources": rule.Resources,
			"resourceNames": rule.ResourceNames, "nonResourceURLs": rule.NonResourceURLs,
		} {
			for _, v := range values {
				if strings.Contains(v, "*") {
					out = append(out, fmt.Sprintf("%s: wildcard %q in %s", at, v, field))
				}
			}
		}
		for _, v := range rule.Verbs {
			if slices.Contains(forbiddenVerbs, strings.ToLower(v)) {
				out = append(out, fmt.Sprintf("%s: verb %q", at, v))
			}
		}
		for _, res := range rule.Resources {
			if slices.Contains(forbiddenResources, strings.ToLower(res)) {
				out = append(out, fmt.Sprintf("%s: resource %q", at, res))
			}
			if r.kind == "ClusterRole" && strings.ToLower(strings.SplitN(res, "/", 2)[0]) == "secrets" {
				out = append(out, fmt.Sprintf("%s: %q cluster-wide (Secrets belong in a namespaced Role)", at, res))
			}
		}
	}
	return out
}

// TestShippedRolesKeepToLeastPrivilege checks every Role and ClusterRole
// the project ships.
func TestShippedRolesKeepToLeastPrivilege(t *testing.T) {
	g := NewWithT(t)
	roles := shippedRoles(t, repoRoot(t))
	names := make([]string, 0, len(roles))
	bad := make([]string, 0, len(roles))
	for _, r := range roles {
		names = append(names, r.kind+"/"+r.name)
		bad = append(bad, violations(r)...)
	}
	t.Logf("checked %d roles: %s", len(roles), strings.Join(names, ", "))
	// The walk found the roles that must be there (a moved directory must
	// not make this test pass on nothing).
	g.Expect(names).To(ContainElements("ClusterRole/manager-role", "Role/manager-role", "Role/leader-election-role",
		"ClusterRole/metrics-reader", "ClusterRole/sunstrider-operator-manager-role", "Role/sunstrider-operator-manager-role"))
	g.Expect(bad).To(BeEmpty())
}

// TestSecretsOnlyInTheOperatorNamespace: the grants on Secrets are those of
// the namespaced Role of the webhook certificates, and name them: the
// serving Secret and the CA Secret (config/default's namePrefix gives them
// the names cmd/main.go's defaults carry).
func TestSecretsOnlyInTheOperatorNamespace(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(filepath.Join(repoRoot(t), generatedPath))
	g.Expect(err).NotTo(HaveOccurred())
	roles, err := rolesIn(generatedPath, data)
	g.Expect(err).NotTo(HaveOccurred())
	var withSecrets, names []string
	for _, r := range roles {
		for _, rule := range r.rules {
			if slices.Contains(rule.Resources, "secrets") {
				withSecrets = append(withSecrets, r.kind)
				g.Expect(rule.Verbs).NotTo(ContainElements("create", "delete", "deletecollection"),
					"the operator only fills the Secrets the deployment creates")
				g.Expect(rule.Resources).To(Equal([]string{"secrets"}))
				names = append(names, rule.ResourceNames...)
			}
		}
	}
	g.Expect(withSecrets).To(HaveEach("Role"))
	g.Expect(names).To(ConsistOf("webhook-server-cert", "webhook-ca"), "only the two Secrets, by name")
}

// TestViolationsAreCaught makes sure the checks above can fail.
func TestViolationsAreCaught(t *testing.T) {
	g := NewWithT(t)
	bad := role{source: "test", kind: "ClusterRole", name: "bad", rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"escalate", "bind"}},
		{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}},
		{APIGroups: []string{"apps"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}},
		{NonResourceURLs: []string{"/*"}, Verbs: []string{"get"}},
	}}
	g.Expect(violations(bad)).To(HaveLen(9))
	ns := bad
	ns.kind, ns.rules = "Role", bad.rules[:1]
	g.Expect(violations(ns)).To(ConsistOf(ContainSubstring("wildcard")), "Secrets are fine in a namespaced Role")
}
