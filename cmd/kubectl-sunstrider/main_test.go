package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/controller/apps"
	"sunstrider.cn/operator/internal/testutil"
)

// The plugin against a real API server, as an admin and as a user who may
// read Applications but not change them. The operator is not running: the
// revisions are made here as it makes them.
func TestRollbackAndHistory(t *testing.T) {
	g := NewWithT(t)
	env, err := testutil.NewEnvironment()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = testutil.Start(env)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	admin := kubeconfigOf(t, env, envtest.User{Name: "admin", Groups: []string{"system:masters"}})
	reader := kubeconfigOf(t, env, envtest.User{Name: "reader"})
	const ns = "rollback"
	c, _, err := clientFor(admin, ns)
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	app.Spec.Deployment.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: "example.com/app:3"}}
	g.Expect(c.Create(ctx, app)).To(Succeed())
	for n, image := range map[int64]string{1: "example.com/app:1", 2: "example.com/app:2", 3: "example.com/app:3"} {
		g.Expect(c.Create(ctx, revision(app, n, image))).To(Succeed())
	}

	plugin := func(kubeconfig string, args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append(args, "--kubeconfig", kubeconfig, "-n", ns), &out)
		return out.String(), err
	}
	out, err := plugin(admin, "history", "web")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Split(strings.TrimSpace(out), "\n")).To(HaveLen(4), out)
	g.Expect(out).To(MatchRegexp(`(?m)^3\s+example.com/app:3`))

	_, err = plugin(admin, "rollback", "web", "--to-revision", "7")
	g.Expect(err).To(MatchError(ContainSubstring("has no revision 7: its revisions are 3, 2, 1")))

	_, err = plugin(reader, "rollback", "web", "--to-revision", "2")
	g.Expect(err).To(MatchError(ContainSubstring("refused: you may not update Application " + ns + "/web")))
	g.Expect(image(g, c, app)).To(Equal("example.com/app:3"), "nothing written")

	out, err = plugin(admin, "rollback", "web", "--to-revision", "2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("rolled back to revision 2"))
	g.Expect(image(g, c, app)).To(Equal("example.com/app:2"))
	got := &sunappsv1.Application{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(app), got)).To(Succeed())
	g.Expect(got.ManagedFields).To(ContainElement(HaveField("Manager", fieldManager)), "the write is the plugin's")

	out, err = plugin(admin, "rollback", "web", "--to-revision", "2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("already runs the template of revision 2"))
}

func image(g Gomega, c client.Client, app *sunappsv1.Application) string {
	got := &sunappsv1.Application{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(app), got)).To(Succeed())
	return got.Spec.Deployment.Template.Spec.Containers[0].Image
}

// revision is revision n of app, with one container of image, as the
// operator makes it.
func revision(app *sunappsv1.Application, n int64, image string) *appsv1.ControllerRevision {
	var data apps.RevisionData
	data.Spec.Deployment.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: image}}
	raw, _ := json.Marshal(data)
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: app.Namespace, Name: fmt.Sprintf("%s-%d", app.Name, n),
			Labels:      map[string]string{apps.ApplicationLabel: app.Name, apply.ManagedByLabel: apply.ManagedByValue},
			Annotations: map[string]string{apps.RevisionImagesAnnotation: image},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: sunappsv1.GroupVersion.String(), Kind: "Application",
				Name: app.Name, UID: app.UID, Controller: new(true)}},
		},
		Data:     runtime.RawExtension{Raw: raw},
		Revision: n,
	}
}

// kubeconfigOf writes a kubeconfig of user for env and returns its path;
// a user other than an admin may read Applications and their revisions.
func kubeconfigOf(t *testing.T, env *envtest.Environment, user envtest.User) string {
	t.Helper()
	g := NewWithT(t)
	u, err := env.AddUser(user, nil)
	g.Expect(err).NotTo(HaveOccurred())
	data, err := u.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(t.TempDir(), user.Name+".kubeconfig")
	g.Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	if len(user.Groups) == 0 {
		c, err := client.New(env.Config, client.Options{})
		g.Expect(err).NotTo(HaveOccurred())
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "read-applications"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{sunappsv1.GroupVersion.Group}, Resources: []string{"applications"},
					Verbs: []string{"get", "list"}},
				{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: []string{"list"}},
			}}
		g.Expect(c.Create(context.Background(), role)).To(Succeed())
		g.Expect(c.Create(context.Background(), &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "read-applications"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: "User", Name: user.Name}},
		})).To(Succeed())
	}
	return path
}
