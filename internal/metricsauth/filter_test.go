package metricsauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"sunstrider.cn/operator/internal/metricsauth"
	"sunstrider.cn/operator/internal/testutil"
)

var cfg *rest.Config

func TestMain(m *testing.M) {
	env, err := testutil.NewEnvironment()
	if err != nil {
		panic(err)
	}
	if cfg, err = testutil.Start(env); err != nil {
		panic(err)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		panic(err)
	}
	os.Exit(code)
}

// TestFilterAnswers checks every answer of the metrics filter against a
// real API server: its TokenReviews and SubjectAccessReviews, and RBAC.
func TestFilterAnswers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	const ns = "default"
	for _, name := range []string{"scraper", "stranger"} {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	token := func(sa string) string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authnv1.TokenRequest{}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}

	httpClient, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	filter, err := metricsauth.FilterProvider(cfg, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	handler, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("metrics"))
	}))
	g.Expect(err).NotTo(HaveOccurred())
	get := func(path, bearer string) int {
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}

	scraper, stranger := token("scraper"), token("stranger")
	// RBAC bindings reach the authorizer's informers asynchronously.
	g.Eventually(func() int { return get("/metrics", scraper) }).Should(Equal(http.StatusOK), "bound to metrics-reader")
	for _, tc := range []struct {
		name, path, bearer string
		want               int
	}{
		{"no credentials", "/metrics", "", http.StatusUnauthorized},
		{"a token the API server does not know", "/metrics", "not-a-token", http.StatusUnauthorized},
		{"a token of a ServiceAccount without metrics-reader", "/metrics", stranger, http.StatusForbidden},
		{"another path than the one granted", "/debug/pprof/", scraper, http.StatusForbidden},
		{"bound to metrics-reader", "/metrics", scraper, http.StatusOK},
	} {
		g.Expect(get(tc.path, tc.bearer)).To(Equal(tc.want), tc.name)
	}
}

// TestFilterAPIServerUnreachable checks that a token that cannot be reviewed
// is a server error, not a rejection.
func TestFilterAPIServerUnreachable(t *testing.T) {
	g := NewWithT(t)
	unreachable := rest.CopyConfig(cfg)
	unreachable.Host = "https://127.0.0.1:1"
	httpClient, err := rest.HTTPClientFor(unreachable)
	g.Expect(err).NotTo(HaveOccurred())
	filter, err := metricsauth.FilterProvider(unreachable, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	handler, err := filter(logr.Discard(), http.NotFoundHandler())
	g.Expect(err).NotTo(HaveOccurred())
	req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer some-token")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	g.Expect(rec.Code).To(Equal(http.StatusInternalServerError))
}
