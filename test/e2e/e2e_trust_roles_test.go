//go:build e2e

package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// This file sorts after e2e_test.go: its tests run on the suite's
// deployment (TestDeployAndHelmApplyCleanlyUnderRestrictedPodSecurity) with
// the operator running as its ServiceAccount
// (TestOperatorRunsAsItsServiceAccount), before the tests that remove them.
// Alone: make test-e2e TEST_ARGS='-run
// TestDeployAnd|TestOperatorRunsAs|TestOperatorServiceAccount|TestBuiltInRoles|TestRoleAggregation'.

var updateRBACGolden = flag.Bool("update-rbac-golden", false,
	"write the operator ServiceAccount's `kubectl auth can-i --list` into test/e2e/testdata")

const (
	// rolesNamespace holds the bindings to the built-in roles.
	rolesNamespace = "sunstrider-roles-e2e"
	// The users bound there, one per built-in role.
	editorUser = "roles-e2e-editor"
	viewerUser = "roles-e2e-viewer"
	adminUser  = "roles-e2e-admin"
)

// operatorSubject is the deployed manager's ServiceAccount as kubectl --as
// names it (the API server adds its groups).
var operatorSubject = "system:serviceaccount:" + operatorNamespace + ":" + serviceAccount

// The operator's namespaced kinds, and its cluster-scoped ones.
var (
	namespacedKinds = []string{"applications.apps.sunstrider.cn", "drinks.example.com",
		"mycustomresources.poc.test.domain"}
	clusterKinds = []string{"guestbooks.webapp.my.domain", "operatorconfigurations.config.sunstrider.cn"}
)

// applyRBAC applies the RBAC objects of `kustomize build config/default`
// and the ValidatingAdmissionPolicy confining the manager's Pod patches
// (what the suite's deployment holds already) and nothing else: the
// webhook configurations, which TestOperatorRunsAsItsServiceAccount points
// at the local operator, stay as they are.
func applyRBAC(t *testing.T) {
	t.Helper()
	all := mustSh(t, nil, kustomize, "build", "config/default")
	var keep []string
	for doc := range strings.SplitSeq(all, "\n---\n") {
		var obj struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		switch obj.Kind {
		case "Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			keep = append(keep, doc)
		}
	}
	mustSh(t, []byte(strings.Join(keep, "\n---\n")), kubectl, "apply", "--server-side", "--force-conflicts", "-f", "-")
}

// canI runs `kubectl auth can-i` as subject and returns whether it is
// allowed (kubectl exits 1 and prints "no" when it is not).
func canI(t *testing.T, subject string, args ...string) bool {
	t.Helper()
	out, err := sh(t, nil, kubectl, append([]string{"auth", "can-i", "--as=" + subject}, args...)...)
	// The answer is the last line; warnings (e.g. a cluster-scoped resource
	// asked about in a namespace) come before it.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	answer := strings.TrimSpace(lines[len(lines)-1])
	switch {
	case err == nil && answer == "yes":
		return true
	case strings.HasPrefix(answer, "no"):
		return false
	}
	// Errorf, not Fatalf: expectAnswers asks from other goroutines.
	t.Errorf("kubectl auth can-i %v as %s: %v\n%s", args, subject, err, out)
	return false
}

// question is one `kubectl auth can-i` a test asks: as subject, args
// (verb, resource, flags); want is the expected answer, about names it in
// a failure.
type question struct {
	subject string
	args    []string
	want    bool
	about   string
}

// expectAnswers asks every question with `kubectl auth can-i`, eight at a
// time (each is a kubectl process: asked one after another, the roles'
// matrix took most of a minute), and fails t for each answer that is not
// the one wanted.
func expectAnswers(t *testing.T, questions []question) {
	t.Helper()
	answers := make([]bool, len(questions))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	for i, q := range questions {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			answers[i] = canI(t, q.subject, q.args...)
		})
	}
	wg.Wait()
	for i, q := range questions {
		if answers[i] != q.want {
			t.Errorf("%s: kubectl auth can-i --as=%s %s answered %t; want %t",
				q.about, q.subject, strings.Join(q.args, " "), answers[i], q.want)
		}
	}
}

// canIList returns the rows of `kubectl auth can-i --list` in namespace as
// subject, each as "resources<TAB>non-resource URLs<TAB>resource names<TAB>verbs".
func canIList(t *testing.T, subject, namespace string) []string {
	t.Helper()
	out := mustSh(t, nil, kubectl, "auth", "can-i", "--list", "-n", namespace, "--as="+subject)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "Resources") {
		t.Fatalf("kubectl auth can-i --list printed no table:\n%s", out)
	}
	cells := regexp.MustCompile(`\s{2,}`)
	rows := make([]string, 0, len(lines)-1)
	for _, line := range lines[1:] {
		fields := cells.Split(strings.TrimSpace(line), -1)
		if strings.HasPrefix(line, " ") { // a non-resource URL: no resource
			fields = append([]string{""}, fields...)
		}
		if len(fields) != 4 {
			t.Fatalf("unexpected row of kubectl auth can-i --list: %q", line)
		}
		rows = append(rows, strings.Join(fields, "\t"))
	}
	return rows
}

// grantsBeyondAnyServiceAccount is what subject may do in namespace that a
// ServiceAccount of the same namespace bound to nothing may not (discovery,
// self reviews and the like).
func grantsBeyondAnyServiceAccount(t *testing.T, subject, namespace string) []string {
	t.Helper()
	nobody := "system:serviceaccount:" + operatorNamespace + ":roles-e2e-nobody"
	base := canIList(t, nobody, namespace)
	var out []string
	for _, row := range canIList(t, subject, namespace) {
		if !slices.Contains(base, row) {
			out = append(out, row)
		}
	}
	slices.Sort(out)
	return out
}

// TestOperatorServiceAccountHoldsOnlyWhatItUses compares what the deployed
// manager's ServiceAccount may do, cluster-wide (as seen from a namespace of
// no importance) and in the operator's namespace, with the reviewed lists in
// testdata, and probes the widest grants: RBAC's answer with `kubectl auth
// can-i`, and for the Pod patches RBAC cannot narrow, the shipped
// ValidatingAdmissionPolicy's with a real patch.
func TestOperatorServiceAccountHoldsOnlyWhatItUses(t *testing.T) {
	g := NewWithT(t)
	applyRBAC(t)
	if _, err := sh(t, nil, kubectl, "get", "namespace", rolesNamespace); err != nil {
		mustSh(t, nil, kubectl, "create", "namespace", rolesNamespace)
	}

	for name, namespace := range map[string]string{
		"operator-can-i-cluster.txt":   rolesNamespace,
		"operator-can-i-namespace.txt": operatorNamespace,
	} {
		got := grantsBeyondAnyServiceAccount(t, operatorSubject, namespace)
		header := fmt.Sprintf("# kubectl auth can-i --list -n %s --as=%s\n"+
			"# less what a ServiceAccount bound to nothing may do, sorted; columns: resources, non-resource URLs,\n"+
			"# resource names, verbs. Reviewed with docs/security.md (\"Roles\"); after a deliberate change of the\n"+
			"# operator's RBAC: make test-e2e TEST_ARGS='-run TestDeployAnd|TestOperatorRunsAs|TestOperatorServiceAccount\n"+
			"#   -args -update-rbac-golden'\n",
			placeholder(namespace), operatorSubject)
		path := filepath.Join(root, "test/e2e/testdata", name)
		if *updateRBACGolden {
			g.Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
			g.Expect(os.WriteFile(path, []byte(header+strings.Join(got, "\n")+"\n"), 0o644)).To(Succeed())
			t.Logf("wrote %s: review it", path)
			continue
		}
		raw, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		var want []string
		for line := range strings.Lines(string(raw)) {
			if line = strings.TrimRight(line, "\n"); line != "" && !strings.HasPrefix(line, "#") {
				want = append(want, line)
			}
		}
		g.Expect(got).To(Equal(want), "kubectl auth can-i --list -n %s of the operator differs from %s", namespace, name)
	}

	// What the operator needs, granted (the probes below would pass on a
	// ServiceAccount bound to nothing).
	questions := make([]question, 0, 34)
	for _, allowed := range [][]string{
		{"update", "mutatingwebhookconfigurations/sunstrider-operator-mutating-webhook-configuration"},
		{"update", "validatingwebhookconfigurations/sunstrider-operator-validating-webhook-configuration"},
		{"update", "customresourcedefinitions/drinks.example.com"},
		{"update", "secrets/sunstrider-operator-webhook-server-cert", "-n", operatorNamespace},
		{"update", "secrets/sunstrider-operator-webhook-ca", "-n", operatorNamespace},
		// The widest grant RBAC keeps: a Guestbook's Pods may be in any
		// namespace, and the election labels them; RBAC cannot name Pods by
		// their labels or owner. The shipped policy refuses the patch itself
		// (below; docs/security.md, "Roles").
		{"patch", "pods", "-n", "kube-system"},
	} {
		questions = append(questions, question{operatorSubject, allowed, true, "what the operator needs"})
	}
	// Nothing wider.
	for _, refused := range [][]string{
		{"update", "mutatingwebhookconfigurations/some-other"},
		{"update", "validatingwebhookconfigurations/some-other"},
		{"patch", "validatingwebhookconfigurations/sunstrider-operator-validating-webhook-configuration"},
		{"delete", "validatingwebhookconfigurations/sunstrider-operator-validating-webhook-configuration"},
		{"create", "validatingwebhookconfigurations"},
		{"update", "customresourcedefinitions/applications.apps.sunstrider.cn"},
		{"update", "customresourcedefinitions/some-other.example.com"},
		{"create", "customresourcedefinitions"},
		{"delete", "customresourcedefinitions/drinks.example.com"},
		{"get", "secrets", "-n", "kube-system"},
		// Only its two certificate Secrets, by name.
		{"get", "secrets/some-other", "-n", operatorNamespace},
		{"list", "secrets", "-n", operatorNamespace},
		{"list", "secrets/sunstrider-operator-webhook-ca", "-n", operatorNamespace},
		{"update", "secrets/sunstrider-operator-webhook-server-cert", "-n", "kube-system"},
		{"list", "secrets", "--all-namespaces"},
		{"create", "secrets", "-n", operatorNamespace},
		{"update", "pods", "-n", "kube-system"},
		{"create", "pods", "-n", "kube-system"},
		{"delete", "pods", "-n", "kube-system"},
		{"patch", "pods", "--subresource=status", "-n", "kube-system"},
		{"create", "pods", "--subresource=exec", "-n", "kube-system"},
		{"create", "pods", "--subresource=eviction", "-n", "kube-system"},
		{"delete", "deployments", "-n", "kube-system"},
		{"delete", "statefulsets", "-n", "kube-system"},
		{"delete", "configmaps", "-n", "kube-system"},
		{"update", "applications.apps.sunstrider.cn", "-n", rolesNamespace},
		{"get", "applications.apps.sunstrider.cn", "-n", rolesNamespace},
		{"create", "namespaces"},
		{"create", "serviceaccounts", "--subresource=token", "-n", operatorNamespace},
		{"create", "clusterrolebindings"},
		{"bind", "clusterroles"},
		{"impersonate", "users"},
	} {
		questions = append(questions, question{operatorSubject, refused, false, "nothing wider"})
	}
	expectAnswers(t, questions)

	expectPodPatchesConfined(t, g)
	expectWritesConfined(t, g)
}

// podPolicy is the shipped ValidatingAdmissionPolicy (and binding)
// confining the manager's Pod patches (config/rbac/manager_pod_policy.yaml).
const podPolicy = "sunstrider-operator-manager-pod-writes"

// writePolicy is the shipped ValidatingAdmissionPolicy (and binding)
// confining the manager's other writes (config/rbac/manager_write_policy.yaml).
const writePolicy = "sunstrider-operator-manager-writes"

// expectPodPatchesConfined patches, as the operator's ServiceAccount, a Pod
// in kube-system that no Guestbook made: RBAC lets the patch through (can-i
// says yes), the shipped policy refuses it. What the policy lets through,
// the election's role label on a Guestbook's Pods, is what
// TestGuestbookElectsOneActiveAndFailsOver sees the operator do.
func expectPodPatchesConfined(t *testing.T, g *WithT) {
	t.Helper()
	expectPolicyTypeChecked(t, g, podPolicy)

	const probe = "operator-pod-policy-probe"
	mustSh(t, []byte(`apiVersion: v1
kind: Pod
metadata: {name: `+probe+`, namespace: kube-system, labels: {app: `+probe+`}}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`), kubectl, "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = sh(t, nil, kubectl, "delete", "pod", probe, "-n", "kube-system", "--wait=false")
	})
	for _, patch := range []string{
		`{"metadata":{"labels":{"webapp.my.domain/role":"active"}}}`,
		`{"metadata":{"labels":{"app":"changed"}}}`,
	} {
		out, err := sh(t, nil, kubectl, "patch", "pod", probe, "-n", "kube-system", "--as="+operatorSubject,
			"--type=merge", "-p", patch)
		g.Expect(err).To(HaveOccurred(), "the operator patched the Pod kube-system/%s with %s:\n%s", probe, patch, out)
		g.Expect(out).To(ContainSubstring("ValidatingAdmissionPolicy '"+podPolicy+"'"), "patch %s", patch)
		g.Expect(out).To(ContainSubstring("the operator may only patch Pods of a Guestbook"), "patch %s", patch)
	}
	// (The API server may add topology labels of its own when the Pod is
	// bound: only the two patched are looked at.)
	labels := mustSh(t, nil, kubectl, "get", "pod", probe, "-n", "kube-system", "-o",
		`jsonpath={.metadata.labels.app}/{.metadata.labels.webapp\.my\.domain/role}`)
	g.Expect(labels).To(Equal(probe+"/"), "the probe Pod's app label is as created, and it has no role")
}

// expectWritesConfined writes, as the operator's ServiceAccount, objects
// RBAC lets it write but it did not make (a ConfigMap and a Service in
// kube-system, a Service without its owner) and a webhook configuration's
// rules: the shipped write policy refuses each, naming its rule. The
// writes are server-side dry runs (admission runs, nothing is stored), so
// that a policy that let one through changes nothing. What the policy lets
// through, the operator's own children, is what the rest of the suite sees
// the operator make.
func expectWritesConfined(t *testing.T, g *WithT) {
	t.Helper()
	expectPolicyTypeChecked(t, g, writePolicy)

	const probe = "operator-write-policy-probe"
	mustSh(t, []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: `+probe+`, namespace: kube-system}
data: {k: v}
`), kubectl, "apply", "-f", "-")
	t.Cleanup(func() { _, _ = sh(t, nil, kubectl, "delete", "configmap", probe, "-n", "kube-system") })
	// RBAC grants the CA injection update, not patch: the webhook
	// configuration is replaced, with a rule widened.
	const webhookName = "sunstrider-operator-validating-webhook-configuration"
	if _, err := sh(t, nil, kubectl, "get", "validatingwebhookconfiguration", webhookName); err != nil {
		// Run alone, before any deployment made it: a stand-in that calls
		// nothing (no object has the label it selects).
		mustSh(t, []byte(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: `+webhookName+`}
webhooks:
- name: vprobe.sunstrider.cn
  clientConfig: {url: "https://127.0.0.1:1/probe"}
  rules: [{operations: [CREATE], apiGroups: [apps.sunstrider.cn], apiVersions: [v1], resources: [applications]}]
  objectSelector: {matchLabels: {sunstrider.cn/write-policy-probe: none}}
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: [v1]
`), kubectl, "apply", "-f", "-")
		t.Cleanup(func() { _, _ = sh(t, nil, kubectl, "delete", "validatingwebhookconfiguration", webhookName) })
	}
	webhook := mustSh(t, nil, kubectl, "get", "validatingwebhookconfiguration", webhookName, "-o", "json")
	var obj map[string]any
	g.Expect(json.Unmarshal([]byte(webhook), &obj)).To(Succeed())
	rules := obj["webhooks"].([]any)[0].(map[string]any)["rules"].([]any)
	rules[0].(map[string]any)["resources"] = []any{"*"}
	data, err := json.Marshal(obj)
	g.Expect(err).NotTo(HaveOccurred())
	widened := string(data)
	for _, write := range []struct {
		args    []string
		stdin   string
		message string
	}{
		{[]string{"create", "configmap", probe + "-new", "-n", "kube-system", "--from-literal=k=v"}, "",
			"the operator may create an object only with the label"},
		{[]string{"patch", "configmap", probe, "-n", "kube-system", "--type=merge", "-p", `{"data":{"k":"changed"}}`}, "",
			"the operator may update only an object it made"},
		{[]string{"delete", "service", "kubernetes", "-n", "default"}, "",
			"the operator may delete only an object it made"},
		{[]string{"replace", "-f", "-"}, widened,
			"the operator may change only the webhooks' clientConfig.caBundle"},
	} {
		args := append(write.args, "--as="+operatorSubject, "--dry-run=server")
		var stdin []byte
		if write.stdin != "" {
			stdin = []byte(write.stdin)
		}
		out, err := sh(t, stdin, kubectl, args...)
		g.Expect(err).To(HaveOccurred(), "kubectl %v was let through:\n%s", args, out)
		g.Expect(out).To(ContainSubstring("ValidatingAdmissionPolicy '"+writePolicy+"'"), "kubectl %v", args)
		g.Expect(out).To(ContainSubstring(write.message), "kubectl %v", args)
	}
}

// expectPolicyTypeChecked waits until kube-controller-manager's status
// controller has checked the current generation of the
// ValidatingAdmissionPolicy name against the schemas it matches, with no
// warning.
func expectPolicyTypeChecked(t *testing.T, g *WithT, name string) {
	t.Helper()
	g.Eventually(func(g Gomega) {
		out := mustSh(t, nil, kubectl, "get", "validatingadmissionpolicy", name, "-o",
			"jsonpath={.metadata.generation} {.status.observedGeneration} {.status.typeChecking}")
		fields := strings.SplitN(out, " ", 3)
		g.Expect(fields).To(HaveLen(3))
		g.Expect(fields[1]).To(Equal(fields[0]), "the policy's status is current")
		g.Expect(fields[2]).NotTo(ContainSubstring("expressionWarnings"))
	}, 30*time.Second).Should(Succeed())
}

// placeholder names namespace as the golden files' header does.
func placeholder(namespace string) string {
	if namespace == operatorNamespace {
		return namespace
	}
	return "<any other namespace>"
}

// TestBuiltInRolesGrantTheNamespacedKinds binds users to the built-in admin,
// edit and view ClusterRoles in one namespace (RoleBindings, as a platform
// does for a team) and checks what aggregation gives them: the namespaced
// kinds as their role says, the cluster-scoped ones not at all.
func TestBuiltInRolesGrantTheNamespacedKinds(t *testing.T) {
	g := NewWithT(t)
	applyRBAC(t)
	if _, err := sh(t, nil, kubectl, "get", "namespace", rolesNamespace); err != nil {
		mustSh(t, nil, kubectl, "create", "namespace", rolesNamespace)
	}
	// Cleanups run last first: the dump sees the failure's namespace.
	t.Cleanup(func() { _, _ = sh(t, nil, kubectl, "delete", "namespace", rolesNamespace, "--wait=false") })
	dumpOnFailure(t, rolesNamespace, "applications", "drinks", "mycustomresources", "rolebindings")
	for user, role := range map[string]string{editorUser: "edit", viewerUser: "view", adminUser: "admin"} {
		out, err := sh(t, nil, kubectl, "create", "rolebinding", user, "-n", rolesNamespace,
			"--clusterrole="+role, "--user="+user)
		g.Expect(err == nil || strings.Contains(out, "AlreadyExists")).To(BeTrue(), out)
	}

	in := []string{"-n", rolesNamespace}
	// The clusterrole-aggregation controller fills admin, edit and view
	// shortly after the roles are created: the first check waits for it.
	g.Eventually(func() bool {
		return canI(t, editorUser, append([]string{"create", namespacedKinds[0]}, in...)...)
	}).Should(BeTrue(), "edit grants creating %s", namespacedKinds[0])

	var questions []question
	ask := func(subject string, want bool, about string, args ...string) {
		questions = append(questions, question{subject, args, want, about})
	}
	for _, kind := range namespacedKinds {
		for _, verb := range []string{"create", "get", "list", "watch", "update", "patch", "delete"} {
			ask(editorUser, true, "edit", append([]string{verb, kind}, in...)...)
			ask(adminUser, true, "admin", append([]string{verb, kind}, in...)...)
		}
		ask(adminUser, true, "admin", append([]string{"deletecollection", kind}, in...)...)
		for _, verb := range []string{"get", "list", "watch"} {
			ask(viewerUser, true, "view", append([]string{verb, kind}, in...)...)
		}
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			ask(viewerUser, false, "view", append([]string{verb, kind}, in...)...)
		}
		// The status is the operator's to write.
		ask(editorUser, false, "edit: the status", append([]string{"update", kind, "--subresource=status"}, in...)...)
		// A RoleBinding grants nothing in another namespace.
		ask(editorUser, false, "edit in default", "create", kind, "-n", "default")
	}
	for _, kind := range clusterKinds {
		for _, user := range []string{editorUser, viewerUser, adminUser} {
			for _, verb := range []string{"get", "list", "create", "update", "delete"} {
				ask(user, false, "cluster-scoped", verb, kind)
				ask(user, false, "cluster-scoped, in the namespace", append([]string{verb, kind}, in...)...)
			}
		}
	}
	expectAnswers(t, questions)
	if t.Failed() {
		return
	}

	// As users meet it: the editor creates one object of each kind (the
	// webhooks admit them: edit also grants what they make), the viewer
	// reads them and may create none.
	objects := map[string]string{
		"applications.apps.sunstrider.cn/roles-app": `apiVersion: apps.sunstrider.cn/v1
kind: Application
metadata: {name: roles-app}
spec:
  deployment:
    replicas: 1
    selector: {matchLabels: {app: roles-app}}
    template:
      metadata: {labels: {app: roles-app}}
      spec:
        containers: [{name: web, image: nginx:1.14.2}]
`,
		"drinks.example.com/roles-drink": `apiVersion: example.com/v1
kind: Drink
metadata: {name: roles-drink}
spec: {name: roles-drink, drink: tea}
`,
		"mycustomresources.poc.test.domain/roles-mcr": `apiVersion: poc.test.domain/v1
kind: MyCustomResource
metadata: {name: roles-mcr}
spec: {name: roles-friend}
`,
	}
	for name, manifest := range objects {
		out, err := sh(t, []byte(strings.ReplaceAll(manifest, "roles-", "roles-viewer-")), kubectl, "create",
			"--as="+viewerUser, "-n", rolesNamespace, "-f", "-")
		g.Expect(err).To(HaveOccurred(), "the viewer creates %s", name)
		g.Expect(out).To(ContainSubstring("Forbidden"), "the viewer creates %s", name)

		mustSh(t, []byte(manifest), kubectl, "create", "--as="+editorUser, "-n", rolesNamespace, "-f", "-")
		mustSh(t, nil, kubectl, "get", name, "--as="+editorUser, "-n", rolesNamespace)
		mustSh(t, nil, kubectl, "get", name, "--as="+viewerUser, "-n", rolesNamespace)
	}
}

// TestRoleAggregationTurnsOff renders the install paths with aggregation
// turned off (the chart's rbac.aggregateToDefaultRoles=false, the kustomize
// component no-role-aggregation) and on (their defaults).
func TestRoleAggregationTurnsOff(t *testing.T) {
	g := NewWithT(t)
	aggregating := func(manifests string) []string {
		var names []string
		for doc := range strings.SplitSeq(manifests, "\n---\n") {
			var obj struct {
				Kind     string
				Metadata struct {
					Name   string
					Labels map[string]string
				}
			}
			g.Expect(yaml.Unmarshal([]byte(doc), &obj)).To(Succeed())
			for k := range obj.Metadata.Labels {
				if obj.Kind == "ClusterRole" && strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
					names = append(names, obj.Metadata.Name)
					break
				}
			}
		}
		return names
	}
	nine := HaveLen(9) // admin, editor and viewer roles of Application, Drink and MyCustomResource

	g.Expect(aggregating(mustSh(t, nil, kustomize, "build", "config/default"))).To(nine)
	overlay := filepath.Join(workDir, "no-role-aggregation")
	g.Expect(os.MkdirAll(overlay, 0o755)).To(Succeed())
	up, err := filepath.Rel(overlay, root) // kustomize refuses absolute paths
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(fmt.Sprintf(
		"resources:\n- %s\ncomponents:\n- %s\n", filepath.Join(up, "config/default"),
		filepath.Join(up, "config/components/no-role-aggregation"))), 0o644)).To(Succeed())
	g.Expect(aggregating(mustSh(t, nil, kustomize, "build", overlay))).To(BeEmpty())

	template := func(extra ...string) []string {
		return append([]string{"template", "sunstrider-operator", "dist/chart", "--namespace", operatorNamespace,
			"--kube-version", serverVersion(t)}, extra...)
	}
	g.Expect(aggregating(mustSh(t, nil, helm, template()...))).To(nine)
	g.Expect(aggregating(mustSh(t, nil, helm, template("--set", "rbac.aggregateToDefaultRoles=false")...))).
		To(BeEmpty())
}
