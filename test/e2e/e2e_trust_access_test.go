//go:build e2e

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

package e2e

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// accessNamespace holds the Applications of the access tests.
const accessNamespace = "access-e2e"

// sampleIn returns the seed's nginx-sample in namespace ns, named name,
// without its fixed nodePort (two of them cannot share it).
func sampleIn(t *testing.T, ns, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../config/samples/apps_v1_application.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "namespace: default", "namespace: "+ns, 1)
	s = strings.Replace(s, "name: nginx-sample", "name: "+name, 1)
	return []byte(strings.Replace(s, "      nodePort: 30080\n", "", 1))
}

// setChildAccess sets the OperatorConfiguration's spec.childAccess (unset
// when mode is empty) and waits until the operator has it in effect.
func setChildAccess(t *testing.T, mode configv1alpha1.ChildAccess) {
	t.Helper()
	patch := `{"spec":{"childAccess":null}}`
	want := configv1alpha1.ChildAccessRequester
	if mode != "" {
		patch, want = `{"spec":{"childAccess":"`+string(mode)+`"}}`, mode
	}
	mustSh(t, nil, kubectl, "patch", "operatorconfiguration", configv1alpha1.ConfigurationName,
		"--type=merge", "-p", patch)
	NewWithT(t).Eventually(func(g Gomega) {
		cfg := &configv1alpha1.OperatorConfiguration{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Name: configv1alpha1.ConfigurationName}, cfg)).To(Succeed())
		g.Expect(cfg.Status.ObservedGeneration).To(Equal(cfg.Generation))
		g.Expect(cfg.Status.Effective.ChildAccess).To(Equal(want))
	}).Should(Succeed())
}

// The seed's Application, applied by users who hold what the installed
// roles give them: the kind's editor role alone is not enough to get a
// Deployment and a Service through it; the built-in edit role in the
// namespace is (the kinds' roles aggregate into it); delegation lets the
// first user through. The running operator answers as its ServiceAccount.
func TestAnApplicationGrantsOnlyWhatItsAuthorsRBACGrants(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, accessNamespace, "applications", "deployments", "services")
	mustSh(t, nil, kubectl, "create", "namespace", accessNamespace)
	t.Cleanup(func() { _, _ = sh(t, nil, kubectl, "delete", "namespace", accessNamespace, "--wait=false") })
	mustSh(t, nil, kubectl, "create", "rolebinding", "alice-applications", "-n", accessNamespace,
		"--clusterrole=sunstrider-operator-apps-application-editor-role", "--user=alice")
	mustSh(t, nil, kubectl, "create", "rolebinding", "bob-edit", "-n", accessNamespace,
		"--clusterrole=edit", "--user=bob")

	// alice may create Applications, not Deployments: refused, and told why.
	g.Eventually(func(g Gomega) {
		out, err := sh(t, sampleIn(t, accessNamespace, "alices"), kubectl, "--as=alice", "apply", "-f", "-")
		g.Expect(err).To(HaveOccurred())
		g.Expect(out).To(ContainSubstring(`user "alice" may not create deployments.apps in namespace ` + accessNamespace))
		g.Expect(out).To(ContainSubstring("spec.childAccess: Delegated"))
	}).Should(Succeed())
	out, err := sh(t, nil, kubectl, "get", "application", "alices", "-n", accessNamespace)
	g.Expect(err).To(HaveOccurred(), "nothing stored")
	g.Expect(out).To(ContainSubstring("NotFound"))

	// bob is a namespace editor: his Application is accepted and Ready.
	g.Eventually(func() (string, error) {
		return sh(t, sampleIn(t, accessNamespace, "bobs"), kubectl, "--as=bob", "apply", "-f", "-")
	}).Should(ContainSubstring("created"))
	g.Eventually(func(g Gomega) {
		app := &sunappsv1.Application{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: accessNamespace, Name: "bobs"}, app)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)).To(BeTrue())
	}).Should(Succeed())

	// A platform that delegates on purpose: alice gets through, live.
	setChildAccess(t, configv1alpha1.ChildAccessDelegated)
	t.Cleanup(func() { setChildAccess(t, "") })
	g.Expect(mustSh(t, sampleIn(t, accessNamespace, "alices"), kubectl, "--as=alice", "apply", "-f", "-")).
		To(ContainSubstring("created"))
}
