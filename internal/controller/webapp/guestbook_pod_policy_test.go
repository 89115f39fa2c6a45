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

package webapp

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/testutil"
)

// The shipped policy's messages (config/rbac/manager_pod_policy.yaml), one
// per rule.
const (
	policyOnlyGuestbookPods = "the operator may only patch Pods of a Guestbook"
	policyOnlyRoleLabel     = "no other label may change"
	policyNothingElse       = "its spec, annotations, owner references and finalizers may not change"
)

// shippedPodPolicy is what of `kustomize build config/default` the policy
// tests install: the manager's ServiceAccount (as a username), its
// ClusterRole and binding, and the policy confining its Pod writes.
type shippedPodPolicy struct {
	username string
	objects  []*unstructured.Unstructured
}

// renderPodPolicy picks out of config/default the objects the policy
// tests need.
func renderPodPolicy(t *testing.T, g *WithT) shippedPodPolicy {
	t.Helper()
	shipped := testutil.RenderShipped(t)
	policy := shipped.Get(t, "ValidatingAdmissionPolicy", "sunstrider-operator-manager-pod-writes")
	// The policy names the ServiceAccount the install creates
	// (config/default's replacements).
	conditions, _, _ := unstructured.NestedSlice(policy.Object, "spec", "matchConditions")
	g.Expect(conditions).To(HaveLen(1))
	g.Expect(conditions[0]).To(HaveKeyWithValue("expression", shipped.PolicyUsernameExpression()))
	return shippedPodPolicy{username: shipped.Username(), objects: []*unstructured.Unstructured{
		shipped.Get(t, "ClusterRole", "sunstrider-operator-manager-role"),
		shipped.Get(t, "ClusterRoleBinding", "sunstrider-operator-manager-rolebinding"),
		policy,
		shipped.Get(t, "ValidatingAdmissionPolicyBinding", policy.GetName()),
	}}
}

// installPodPolicy installs the shipped policy, the manager's ClusterRole
// and its binding (removed when the test ends) and returns a client
// impersonating the manager's ServiceAccount, once the policy refuses a
// probe Pod's relabelling.
func installPodPolicy(t *testing.T, g *WithT) (*rest.Config, client.Client) {
	t.Helper()
	ctx := context.Background()
	shipped := renderPodPolicy(t, g)
	for _, obj := range shipped.objects {
		g.Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
	}
	t.Cleanup(func() {
		for _, obj := range shipped.objects {
			_ = k8sClient.Delete(ctx, obj)
		}
	})

	cfg := rest.CopyConfig(suite.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: shipped.username}
	operator, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// RBAC and policies load asynchronously: wait until a probe Pod's
	// relabelling gets past RBAC and is refused by the policy.
	probe := createPod(t, g, "kube-system", "pod-policy-probe-", map[string]string{"app": "probe"}, nil)
	g.Eventually(func(g Gomega) {
		err := patchPod(operator, probe, `{"metadata":{"labels":{"webapp.my.domain/role":"active"}}}`)
		g.Expect(err).To(MatchError(ContainSubstring(policyOnlyGuestbookPods)))
	}).Should(Succeed())
	return cfg, operator
}

// createPod creates a Pod in namespace (deleted when the test ends).
func createPod(t *testing.T, g *WithT, namespace, generateName string, labels map[string]string,
	owners []metav1.OwnerReference) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: generateName, Labels: labels,
			OwnerReferences: owners},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/probe:1"}}},
	}
	g.Expect(k8sClient.Create(context.Background(), pod)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), pod, client.GracePeriodSeconds(0)) })
	return pod
}

func patchPod(c client.Client, pod *corev1.Pod, patch string) error {
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	return c.Patch(context.Background(), target, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// TestShippedPodPolicyConfinesTheOperatorsPodPatches: RBAC lets the
// manager's ServiceAccount patch every Pod (a Guestbook may be in any
// namespace); the shipped ValidatingAdmissionPolicy lets through only a
// change of the role label of a Guestbook's Pod, as the election makes it.
func TestShippedPodPolicyConfinesTheOperatorsPodPatches(t *testing.T) {
	g := newG(t)
	_, operator := installPodPolicy(t, g)
	ns := testutil.Namespace(t, k8sClient)

	// A Pod as the StatefulSet controller makes it for the Guestbook
	// gb-policy (envtest runs no garbage collector: the owner need not
	// exist).
	labels := map[string]string{
		"app.kubernetes.io/name":       appName,
		LabelGuestbook:                 "gb-policy",
		"app.kubernetes.io/managed-by": "sunstrider-operator",
	}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "gb-policy",
		UID: "00000000-0000-0000-0000-000000000001", Controller: new(true)}
	pod := createPod(t, g, ns, "gb-policy-", labels, []metav1.OwnerReference{owner})

	for _, role := range []string{RoleActive, RoleStandby, RoleActive} {
		g.Expect(patchPod(operator, pod, `{"metadata":{"labels":{"webapp.my.domain/role":"`+role+`"}}}`)).
			To(Succeed(), "the operator sets the role %s", role)
	}
	got := &corev1.Pod{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(pod), got)).To(Succeed())
	g.Expect(got.Labels).To(HaveKeyWithValue(LabelRole, RoleActive))

	for patch, message := range map[string]string{
		`{"metadata":{"labels":{"webapp.my.domain/role":"leader"}}}`:                                      policyOnlyRoleLabel,
		`{"metadata":{"labels":{"webapp.my.domain/role":null}}}`:                                          policyOnlyRoleLabel,
		`{"metadata":{"labels":{"other":"x"}}}`:                                                           policyOnlyRoleLabel,
		`{"metadata":{"labels":{"webapp.my.domain/role":"standby","other":"x"}}}`:                         policyOnlyRoleLabel,
		`{"metadata":{"labels":{"app.kubernetes.io/name":null}}}`:                                         policyOnlyRoleLabel,
		`{"metadata":{"labels":{"webapp.my.domain/guestbook":"another"}}}`:                                policyOnlyRoleLabel,
		`{"metadata":{"annotations":{"a":"b"}}}`:                                                          policyNothingElse,
		`{"metadata":{"finalizers":["example.com/keep"]}}`:                                                policyNothingElse,
		`{"spec":{"activeDeadlineSeconds":60}}`:                                                           policyNothingElse,
		`{"spec":{"containers":[{"name":"c","image":"example.com/other:1"}]}}`:                            policyNothingElse,
		`{"metadata":{"labels":{"webapp.my.domain/role":"standby"}},"spec":{"activeDeadlineSeconds":60}}`: policyNothingElse,
	} {
		err := patchPod(operator, pod, patch)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "patch %s: %v", patch, err)
		g.Expect(err).To(MatchError(ContainSubstring(message)), "patch %s", patch)
	}

	// Pods not of a Guestbook: any label, in any namespace.
	lookalike := createPod(t, g, ns, "gb-policy-", labels, nil) // no controller
	foreign := createPod(t, g, "kube-system", "foreign-", map[string]string{"app": "foreign"}, nil)
	other := createPod(t, g, ns, "gb-other-", labels, []metav1.OwnerReference{owner}) // not named after it
	for _, p := range []*corev1.Pod{lookalike, foreign, other} {
		for _, patch := range []string{
			`{"metadata":{"labels":{"webapp.my.domain/role":"active"}}}`,
			`{"metadata":{"labels":{"app":"x"}}}`,
		} {
			err := patchPod(operator, p, patch)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "patch %s of %s/%s: %v", patch, p.Namespace, p.Name, err)
			g.Expect(err).To(MatchError(ContainSubstring(policyOnlyGuestbookPods)), "patch %s of %s/%s", patch, p.Namespace, p.Name)
		}
	}

	// The policy is about the operator only: an administrator's patch
	// passes.
	g.Expect(patchPod(k8sClient, pod, `{"metadata":{"labels":{"other":"x"}}}`)).To(Succeed())
}

// TestGuestbookFailsOverAsItsServiceAccountUnderThePodPolicy runs the
// manager as its ServiceAccount, with its ClusterRole and the shipped Pod
// policy: the election still labels the instances and fails over.
func TestGuestbookFailsOverAsItsServiceAccountUnderThePodPolicy(t *testing.T) {
	g := newG(t)
	cfg, _ := installPodPolicy(t, g)

	admin := suite.Config
	stopManager()
	suite.Config = cfg
	err := startManager()
	suite.Config = admin
	t.Cleanup(func() {
		stopManager()
		if err := startManager(); err != nil {
			t.Errorf("restarting the manager as administrator: %v", err)
		}
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.HasPrefix(cfg.Impersonate.UserName, "system:serviceaccount:")).To(BeTrue())

	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-policy-failover", ns, 2, "policy-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	createPods(g, sts, 0, 1)
	setReady(g, ns, "gb-policy-failover-0", true)
	setReady(g, ns, "gb-policy-failover-1", true)
	expectRoles(g, ns, gb.Name, "gb-policy-failover-0", "gb-policy-failover-1")

	setReady(g, ns, "gb-policy-failover-0", false)
	expectRoles(g, ns, gb.Name, "gb-policy-failover-1", "gb-policy-failover-0")
}
