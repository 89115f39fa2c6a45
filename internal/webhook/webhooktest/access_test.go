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

package webhooktest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// editRules are the ClusterRoles holding the rules of the built-in edit
// role (its writes, and view's reads): edit aggregates them (and the kinds'
// editor roles) in a cluster, but envtest runs no kube-controller-manager,
// so its edit role stays empty there. The e2e suite binds edit itself.
var editRules = []string{"system:aggregate-to-edit", "system:aggregate-to-view"}

// bindEdit gives user the built-in edit role's rules in namespace ns.
func bindEdit(t *testing.T, user, ns string) {
	t.Helper()
	for _, role := range editRules {
		bind(t, user, ns, role)
	}
}

// The tests below write as users who hold only the roles they are given,
// by impersonation, against the API server's own RBAC: the webhooks ask it
// (SubjectAccessReview) whether the user may do what the object would have
// the operator do. A right just granted can take a moment to reach the
// authorizer, and a refusal is cached for access.DenyTTL, hence Eventually
// after a grant.

// clusterRoleFromFile creates the ClusterRole that config/rbac/file ships
// (once for the suite) and returns its name.
func clusterRoleFromFile(t *testing.T, file string) string {
	t.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, role); err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	if err := k8sClient.Create(context.Background(), role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating ClusterRole %s: %v", role.Name, err)
	}
	return role.Name
}

// clusterRole creates a ClusterRole holding rules, named after the test.
func clusterRole(t *testing.T, suffix string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "access-" + suffix + "-"}, Rules: rules}
	if err := k8sClient.Create(context.Background(), role); err != nil {
		t.Fatalf("creating ClusterRole: %v", err)
	}
	return role.Name
}

// bind gives user the ClusterRole role in namespace ns, or cluster-wide
// when ns is empty.
func bind(t *testing.T, user, ns, role string) {
	t.Helper()
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	meta := metav1.ObjectMeta{GenerateName: "access-", Namespace: ns}
	var obj client.Object = &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: ref}
	if ns == "" {
		obj = &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subjects, RoleRef: ref}
	}
	if err := k8sClient.Create(context.Background(), obj); err != nil {
		t.Fatalf("binding %s to %s: %v", role, user, err)
	}
}

// clientAs returns a client acting as user (with the group every
// authenticated user has).
func clientAs(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// setChildAccess puts mode in effect for one test.
func setChildAccess(t *testing.T, mode configv1alpha1.ChildAccess) {
	t.Helper()
	childAccess.Store(mode)
	t.Cleanup(func() { childAccess.Store(configv1alpha1.ChildAccessRequester) })
}

// setSystemNamespaces lists namespaces in the OperatorConfiguration's
// spec.guestbookSystemNamespaces for one test.
func setSystemNamespaces(t *testing.T, namespaces ...string) {
	t.Helper()
	systemNamespaces.Store(&namespaces)
	t.Cleanup(func() { systemNamespaces.Store(nil) })
}

// expectForbidden checks that err is the API server's Forbidden carrying
// the webhook's message, and that obj was not stored.
func expectForbidden(g Gomega, err error, obj client.Object, message string) {
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(message))
	g.Expect(apierrors.IsNotFound(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), emptyCopy(obj)))).
		To(BeTrue(), "nothing stored")
}

func TestApplicationEditorAloneIsRefusedAndToldWhy(t *testing.T) {
	g := NewWithT(t)
	ns := testutil.Namespace(t, k8sClient)
	bind(t, "alice", ns, clusterRoleFromFile(t, "apps_application_editor_role.yaml"))
	alice := clientAs(t, "alice")

	g.Eventually(func(g Gomega) {
		app := validApplication(ns, "web")
		expectForbidden(g, alice.Create(context.Background(), app), app,
			`user "alice" may not create deployments.apps in namespace `+ns+", which this Application would have the operator do")
	}).WithTimeout(10 * time.Second).Should(Succeed())

	// Allowed the Deployment but not the Service its ports ask for.
	bind(t, "alice", ns, clusterRole(t, "deployments", rbacv1.PolicyRule{
		APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create", "update"},
	}))
	g.Eventually(func(g Gomega) {
		app := validApplication(ns, "web")
		expectForbidden(g, alice.Create(context.Background(), app), app,
			`user "alice" may not create services in namespace `+ns)
	}).WithTimeout(10 * time.Second).Should(Succeed())
	// Without ports there is no Service: the Deployment's rights suffice.
	g.Expect(alice.Create(context.Background(), minimalApplication(ns, "worker"))).To(Succeed())
}

func TestEditRoleMayCreateEveryNamespacedKind(t *testing.T) {
	g := NewWithT(t)
	ns := testutil.Namespace(t, k8sClient)
	// In a cluster, the kinds' editor roles aggregate into edit; envtest
	// runs no aggregation controller, so they are bound beside edit's own
	// rules here (the e2e suite binds edit alone).
	bindEdit(t, "bob", ns)
	for _, role := range []string{clusterRoleFromFile(t, "apps_application_editor_role.yaml"),
		clusterRoleFromFile(t, "example_drink_editor_role.yaml"),
		clusterRoleFromFile(t, "poc_mycustomresource_editor_role.yaml")} {
		bind(t, "bob", ns, role)
	}
	bob := clientAs(t, "bob")
	g.Eventually(func() error { return bob.Create(context.Background(), validApplication(ns, "web")) }).
		WithTimeout(10 * time.Second).Should(Succeed())
	g.Expect(bob.Create(context.Background(), validDrink(ns, "tea"))).To(Succeed())
	g.Expect(bob.Create(context.Background(), validMyCustomResource(ns, "friendly"))).To(Succeed())
}

func TestDelegatedLetsTheApplicationEditorThrough(t *testing.T) {
	g := NewWithT(t)
	ns := testutil.Namespace(t, k8sClient)
	bind(t, "carol", ns, clusterRoleFromFile(t, "apps_application_editor_role.yaml"))
	carol := clientAs(t, "carol")
	g.Eventually(func(g Gomega) {
		app := validApplication(ns, "web")
		expectForbidden(g, carol.Create(context.Background(), app), app, "may not create deployments.apps")
	}).WithTimeout(10 * time.Second).Should(Succeed())

	setChildAccess(t, configv1alpha1.ChildAccessDelegated)
	g.Expect(carol.Create(context.Background(), validApplication(ns, "web"))).To(Succeed())
}

// TestUpdateIsCheckedWhenItChangesWhatTheOperatorWrites: an Application
// editor without the children's rights may write an annotation, which makes
// the operator do nothing new, but neither a label (the operator copies the
// labels onto the Deployment and the Service) nor the spec; with the
// children's rights the label goes through.
func TestUpdateIsCheckedWhenItChangesWhatTheOperatorWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	g.Expect(k8sClient.Create(ctx, validApplication(ns, key.Name))).To(Succeed())
	bind(t, "dave", ns, clusterRoleFromFile(t, "apps_application_editor_role.yaml"))
	dave := clientAs(t, "dave")
	update := func(edit func(*sunappsv1.Application)) error {
		app := &sunappsv1.Application{}
		if err := dave.Get(ctx, key, app); err != nil {
			return err
		}
		edit(app)
		return dave.Update(ctx, app)
	}

	g.Eventually(func() error {
		return update(func(a *sunappsv1.Application) { a.Annotations = map[string]string{"example.com/note": "x"} })
	}).WithTimeout(10*time.Second).Should(Succeed(), "an annotation is allowed")

	for _, change := range []struct {
		name string
		edit func(*sunappsv1.Application)
	}{
		{"a label", func(a *sunappsv1.Application) { a.Labels = map[string]string{"team": "a"} }},
		{"the spec", func(a *sunappsv1.Application) { a.Spec.Deployment.Replicas = new(int32(5)) }},
	} {
		err := update(change.edit)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: want Forbidden, got %v", change.name, err)
		g.Expect(err.Error()).To(ContainSubstring(`user "dave" may not create deployments.apps in namespace `+ns),
			change.name)
	}
	stored := &sunappsv1.Application{}
	g.Expect(k8sClient.Get(ctx, key, stored)).To(Succeed())
	g.Expect(stored.Annotations).To(HaveKeyWithValue("example.com/note", "x"))
	g.Expect(stored.Labels).NotTo(HaveKey("team"), "the stored labels are kept")
	g.Expect(stored.Spec.Deployment.Replicas).NotTo(HaveValue(Equal(int32(5))), "the stored spec is kept")

	bindEdit(t, "dave", ns)
	g.Eventually(func() error {
		return update(func(a *sunappsv1.Application) { a.Labels = map[string]string{"team": "a"} })
	}).WithTimeout(10*time.Second).Should(Succeed(), "the label, with the rights of the children")
}

func TestGuestbookCreatorNeedsRightsWhereTheWorkloadLands(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	other := testutil.Namespace(t, k8sClient)
	bind(t, "erin", "", clusterRoleFromFile(t, "webapp_guestbook_editor_role.yaml"))
	bindEdit(t, "erin", ns)
	erin := clientAs(t, "erin")

	// Her namespace: allowed, once the bindings reach the authorizer.
	g.Eventually(func() error {
		gb := validGuestbook(ns, "mine")
		gb.Spec.Namespace = ns
		return erin.Create(ctx, gb)
	}).WithTimeout(10 * time.Second).Should(Succeed())

	// Someone else's namespace: refused, naming the first right she lacks
	// there.
	gb := validGuestbook(ns, "theirs")
	gb.Spec.Namespace = other
	expectForbidden(g, erin.Create(ctx, gb), gb,
		`user "erin" may not create statefulsets.apps in namespace `+other+`, which this Guestbook would have the operator do`)

	// Allowed the workload but not to read the ConfigMap its instances mount.
	bind(t, "erin", other, clusterRole(t, "workload",
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"create", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "update"}}))
	g.Eventually(func(g Gomega) {
		gb := validGuestbook(ns, "theirs")
		gb.Spec.Namespace = other
		expectForbidden(g, erin.Create(ctx, gb), gb, `may not get configmaps/gb-config in namespace `+other)
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// TestGuestbookCreatorNeedsCreateConfigMapsWhenTheOperatorMakesIt: the
// operator creates the ConfigMap a Guestbook names when it does not exist,
// so its author must be allowed to create ConfigMaps there; reading one
// that exists is enough otherwise.
func TestGuestbookCreatorNeedsCreateConfigMapsWhenTheOperatorMakesIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	bind(t, "heidi", "", clusterRoleFromFile(t, "webapp_guestbook_editor_role.yaml"))
	bind(t, "heidi", ns, clusterRole(t, "workload-no-configmaps",
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"create", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}))
	heidi := clientAs(t, "heidi")
	guestbook := func() *webappv1.Guestbook {
		gb := validGuestbook(ns, "heidis")
		gb.Spec.Namespace = ns
		return gb
	}

	// The ConfigMap is missing: the operator would create it.
	g.Eventually(func(g Gomega) {
		gb := guestbook()
		expectForbidden(g, heidi.Create(ctx, gb), gb,
			`user "heidi" may not create configmaps in namespace `+ns+", which this Guestbook would have the operator do")
	}).WithTimeout(10 * time.Second).Should(Succeed())

	// It exists: the operator only reads it, which she may.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: guestbook().Spec.ConfigMapName, Namespace: ns}}
	g.Expect(k8sClient.Create(ctx, cm)).To(Succeed())
	g.Expect(heidi.Create(ctx, guestbook())).To(Succeed())

	// Switching to a ConfigMap that does not exist is checked as a create.
	gb := &webappv1.Guestbook{}
	g.Expect(heidi.Get(ctx, client.ObjectKeyFromObject(guestbook()), gb)).To(Succeed())
	gb.Spec.ConfigMapName = "gb-missing"
	err := heidi.Update(ctx, gb)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`may not create configmaps in namespace ` + ns))
}

// TestGuestbookInASystemNamespaceIsRefusedUnlessListed: whatever the mode
// and the author's rights (the envtest administrator has them all), a
// Guestbook in a kube-* namespace is refused, naming the field and the
// OperatorConfiguration field that allows it, until that field lists the
// namespace.
func TestGuestbookInASystemNamespaceIsRefusedUnlessListed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	inSystem := func(name, system string) *webappv1.Guestbook {
		gb := validGuestbook(ns, name)
		gb.Spec.Namespace = system
		return gb
	}
	expectRefused := func(gb *webappv1.Guestbook) {
		t.Helper()
		err := k8sClient.Create(ctx, gb)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.namespace: Forbidden: " + gb.Spec.Namespace + " is a system namespace"))
		g.Expect(err.Error()).To(ContainSubstring("spec.guestbookSystemNamespaces of the OperatorConfiguration"))
		g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(gb), &webappv1.Guestbook{}))).
			To(BeTrue(), "nothing stored")
	}

	for _, mode := range []configv1alpha1.ChildAccess{configv1alpha1.ChildAccessRequester, configv1alpha1.ChildAccessDelegated} {
		setChildAccess(t, mode)
		expectRefused(inSystem("system", "kube-system"))
		expectRefused(inSystem("public", "kube-public"))
	}

	setSystemNamespaces(t, "kube-system")
	g.Expect(k8sClient.Create(ctx, inSystem("system", "kube-system"))).To(Succeed(), "listed")
	expectRefused(inSystem("public", "kube-public"))
}

func TestMyCustomResourceCreatorMustBeAbleToReadTheFriendPod(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	bind(t, "frank", ns, clusterRoleFromFile(t, "poc_mycustomresource_editor_role.yaml"))
	frank := clientAs(t, "frank")
	g.Eventually(func(g Gomega) {
		obj := validMyCustomResource(ns, "friendly")
		expectForbidden(g, frank.Create(ctx, obj), obj,
			`user "frank" may not get pods/friend-0 in namespace `+ns+", which this MyCustomResource would have the operator do")
	}).WithTimeout(10 * time.Second).Should(Succeed())

	// The right to read that one Pod is enough.
	bind(t, "frank", ns, clusterRole(t, "friend", rbacv1.PolicyRule{
		APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"friend-0"}, Verbs: []string{"get"},
	}))
	g.Eventually(func() error { return frank.Create(ctx, validMyCustomResource(ns, "friendly")) }).
		WithTimeout(10 * time.Second).Should(Succeed())
}

func TestDrinkCreatorNeedsConfigMapRights(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	bind(t, "grace", ns, clusterRoleFromFile(t, "example_drink_editor_role.yaml"))
	grace := clientAs(t, "grace")
	g.Eventually(func(g Gomega) {
		drink := validDrink(ns, "tea")
		expectForbidden(g, grace.Create(ctx, drink), drink,
			`user "grace" may not create configmaps in namespace `+ns+", which this Drink would have the operator do")
	}).WithTimeout(10 * time.Second).Should(Succeed())
}
