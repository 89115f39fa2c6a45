package rbac_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sunstrider.cn/operator/internal/testutil"

	. "github.com/onsi/gomega"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// caInjectionRole is the ClusterRole granting the manager's CA injection
// (config/rbac/ca_injection_role.yaml) as the installs name it.
const caInjectionRole = "sunstrider-operator-ca-injection-role"

// TestCAInjectionRightsOnlyWhereTheManagerInjects: the right to update the
// webhook configurations and the Drink CRD, and the rights on the
// certificate Secrets, come with the installs where the manager manages
// its certificate and injects its CA (--cert-mode=self), and with no
// other: not with cert-manager (its CA injector does it), not without
// webhooks, not under OLM.
func TestCAInjectionRightsOnlyWhereTheManagerInjects(t *testing.T) {
	root := repoRoot(t)
	run := func(t *testing.T, env, name string, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(testutil.Tool(t, root, env, name), args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
		}
		return stdout.String()
	}
	// kustomizeWith builds config/default with the components given
	// enabled, as a user uncomments them.
	kustomizeWith := func(t *testing.T, components ...string) string {
		t.Helper()
		g := NewWithT(t)
		dir := filepath.Join(t.TempDir(), "config")
		g.Expect(os.CopyFS(dir, os.DirFS(filepath.Join(root, "config")))).To(Succeed())
		path := filepath.Join(dir, "default", "kustomization.yaml")
		data, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		text := strings.Replace(string(data), "\n#components:\n", "\ncomponents:\n", 1)
		for _, c := range components {
			line := "\n#- " + c + "\n"
			g.Expect(text).To(ContainSubstring(line), "config/default/kustomization.yaml offers %s", c)
			text = strings.Replace(text, line, "\n- "+c+"\n", 1)
		}
		g.Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
		return run(t, "KUSTOMIZE", "kustomize", "build", filepath.Join(dir, "default"))
	}
	helm := func(t *testing.T, set ...string) string {
		args := make([]string, 0, 5+2*len(set))
		args = append(args, "template", "sunstrider-operator", "dist/chart", "--namespace", "ns")
		for _, s := range set {
			args = append(args, "--set", s)
		}
		return run(t, "HELM", "helm", args...)
	}
	csv, err := os.ReadFile(filepath.Join(root, "bundle/manifests/sunstrider-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		install  string
		rendered func(t *testing.T) string
		injects  bool
	}{
		{"kustomize", func(t *testing.T) string { return kustomizeWith(t) }, true},
		{"kustomize with cert-manager", func(t *testing.T) string { return kustomizeWith(t, "../components/cert-manager") }, false},
		{"chart", func(t *testing.T) string { return helm(t) }, true},
		{"chart with cert-manager", func(t *testing.T) string { return helm(t, "certManagement=cert-manager") }, false},
		{"chart without webhooks", func(t *testing.T) string { return helm(t, "webhook.enabled=false") }, false},
		{"OLM bundle", func(*testing.T) string { return string(csv) }, false},
	} {
		t.Run(tt.install, func(t *testing.T) {
			g := NewWithT(t)
			out := tt.rendered(t)
			g.Expect(out).To(Or(ContainSubstring("kind: ClusterRole"), ContainSubstring("clusterPermissions:")),
				"the install grants cluster-wide rights")
			if tt.injects {
				g.Expect(out).To(ContainSubstring("name: "+caInjectionRole+"\n"), "the ClusterRole")
				g.Expect(out).To(ContainSubstring("name: "+caInjectionRole+"binding\n"), "its binding")
				// The certificate Secrets, by the names cmd/main.go's
				// defaults carry, and no other.
				g.Expect(out).To(MatchRegexp(`resourceNames:\s*- sunstrider-operator-webhook-server-cert\s*resources:\s*- secrets\n`))
				g.Expect(out).To(MatchRegexp(`resourceNames:\s*- sunstrider-operator-webhook-ca\s*resources:\s*- secrets\n`))
				g.Expect(regexp.MustCompile(`resources:\s*- secrets\n`).FindAllString(out, -1)).To(HaveLen(2))
				return
			}
			// Nor any right on Secrets: the manager reads its certificate
			// from a volume.
			g.Expect(out).NotTo(MatchRegexp(`- secrets\n`))
			g.Expect(out).NotTo(ContainSubstring(caInjectionRole))
			g.Expect(out).NotTo(ContainSubstring("- sunstrider-operator-validating-webhook-configuration\n"),
				"no rule names the webhook configuration")
			g.Expect(out).NotTo(MatchRegexp(`resourceNames:\s*- drinks\.example\.com\n`), "no rule names the Drink CRD")
		})
	}
}

// TestPoliciesNameTheInstalledServiceAccount: the admission policies
// confining the manager's writes match its ServiceAccount as config/default
// names it, whatever namespace and namePrefix it is given there.
func TestPoliciesNameTheInstalledServiceAccount(t *testing.T) {
	root := repoRoot(t)
	g := NewWithT(t)
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		kustomize = filepath.Join(root, "bin", "kustomize")
	}
	dir := filepath.Join(t.TempDir(), "config")
	g.Expect(os.CopyFS(dir, os.DirFS(filepath.Join(root, "config")))).To(Succeed())
	path := filepath.Join(dir, "default", "kustomization.yaml")
	data, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	text := strings.Replace(string(data), "\nnamespace: sunstrider-operator-system\n", "\nnamespace: team-ops\n", 1)
	text = strings.Replace(text, "\nnamePrefix: sunstrider-operator-\n", "\nnamePrefix: acme-\n", 1)
	g.Expect(text).NotTo(Equal(string(data)))
	g.Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", filepath.Join(dir, "default"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	g.Expect(cmd.Run()).To(Succeed(), stderr.String())

	var policies int
	dec := utilyaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		var obj struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct {
				MatchConditions []struct{ Name, Expression string } `json:"matchConditions"`
			}
		}
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else {
			g.Expect(err).NotTo(HaveOccurred())
		}
		if obj.Kind != "ValidatingAdmissionPolicy" {
			continue
		}
		policies++
		g.Expect(obj.Spec.MatchConditions).To(HaveLen(1), obj.Metadata.Name)
		g.Expect(obj.Spec.MatchConditions[0].Expression).To(Equal(
			"request.userInfo.username == 'system:serviceaccount:' + 'team-ops' + ':' + 'acme-controller-manager'"),
			obj.Metadata.Name)
	}
	g.Expect(policies).To(Equal(2), "the Pod policy and the write policy")
}
