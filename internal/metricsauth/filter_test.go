package metricsauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"sunstrider.cn/operator/internal/metricsauth"
	"sunstrider.cn/operator/internal/testutil"
)

var (
	env *envtest.Environment
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	var err error
	if env, err = testutil.NewEnvironment(); err != nil {
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

const (
	ns = "default"
	// dedicatedAudience is an audience of the operator's metrics alone,
	// as --metrics-token-audiences would name it.
	dedicatedAudience = "sunstrider-operator-metrics"
)

var (
	rbacOnce sync.Once
	rbacErr  error
)

// bindScraper makes, once per test binary, the ServiceAccount scraper,
// bound to a ClusterRole that allows GET /metrics, and the ServiceAccount
// stranger, bound to nothing, and waits until the API server authorizes
// the binding (its authorizer learns RBAC objects asynchronously).
func bindScraper(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	rbacOnce.Do(func() {
		ctx := context.Background()
		for _, name := range []string{"scraper", "stranger"} {
			if _, rbacErr = cs.CoreV1().ServiceAccounts(ns).Create(ctx,
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); rbacErr != nil {
				return
			}
		}
		if _, rbacErr = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		}, metav1.CreateOptions{}); rbacErr != nil {
			return
		}
		_, rbacErr = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-scraper"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
		}, metav1.CreateOptions{})
	})
	g := NewWithT(t)
	g.Expect(rbacErr).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(),
			&authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
				User:                  "system:serviceaccount:" + ns + ":scraper",
				NonResourceAttributes: &authzv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
			}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(review.Status.Allowed).To(BeTrue())
	}).Should(Succeed(), "the API server authorizes the scraper's binding")
	return cs
}

// token is a token of the ServiceAccount sa for audiences, minted by the
// API server (TokenRequest); none: the API server's own audiences, as the
// kubelet mounts in a Pod.
func token(t *testing.T, cs *kubernetes.Clientset, sa string, audiences ...string) string {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: audiences}}, metav1.CreateOptions{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// serve returns a GET of path with bearer, answered by the metrics filter
// for audiences in front of a handler that writes "metrics".
func serve(t *testing.T, audiences []string) func(path, bearer string) int {
	t.Helper()
	g := NewWithT(t)
	httpClient, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	filter, err := metricsauth.FilterProvider(audiences)(cfg, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	handler, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("metrics"))
	}))
	g.Expect(err).NotTo(HaveOccurred())
	return func(path, bearer string) int {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}
}

// TestFilterAnswers checks every answer of the metrics filter against a
// real API server: its TokenReviews and SubjectAccessReviews, and RBAC.
// With no audience named, the API server's own apply: those of the
// tokens it mints without audiences, as the kubelet mounts in every Pod.
func TestFilterAnswers(t *testing.T) {
	g := NewWithT(t)
	cs := bindScraper(t)
	get := serve(t, nil)
	scraper, stranger := token(t, cs, "scraper"), token(t, cs, "stranger")
	for _, tc := range []struct {
		name, path, bearer string
		want               int
	}{
		{"no credentials", "/metrics", "", http.StatusUnauthorized},
		{"a token the API server does not know", "/metrics", "not-a-token", http.StatusUnauthorized},
		{"a token of the scraper issued for another audience", "/metrics", token(t, cs, "scraper", dedicatedAudience),
			http.StatusUnauthorized},
		{"a token of a ServiceAccount without metrics-reader", "/metrics", stranger, http.StatusForbidden},
		{"another path than the one granted", "/debug/pprof/", scraper, http.StatusForbidden},
		{"bound to metrics-reader", "/metrics", scraper, http.StatusOK},
	} {
		g.Expect(get(tc.path, tc.bearer)).To(Equal(tc.want), tc.name)
	}
}

// TestFilterAudiences checks that the audiences named
// (--metrics-token-audiences) are the only ones served: a token the API
// server minted for another, its own included, is refused.
func TestFilterAudiences(t *testing.T) {
	cs := bindScraper(t)
	ownToken := token(t, cs, "scraper")
	apiServerAudience := audiencesOf(t, ownToken)
	NewWithT(t).Expect(apiServerAudience).NotTo(BeEmpty(), "the API server's audience, from its own token")
	dedicated, other := token(t, cs, "scraper", dedicatedAudience), token(t, cs, "scraper", "another-service")
	both := token(t, cs, "scraper", "another-service", dedicatedAudience)
	for _, tc := range []struct {
		name      string
		audiences []string
		want      map[string]int
	}{
		{"a dedicated audience", []string{dedicatedAudience}, map[string]int{
			"for it": http.StatusOK, "for it and another": http.StatusOK,
			"for the API server": http.StatusUnauthorized, "for another": http.StatusUnauthorized,
		}},
		{"the API server's and a dedicated one", append([]string{dedicatedAudience}, apiServerAudience...), map[string]int{
			"for it": http.StatusOK, "for it and another": http.StatusOK,
			"for the API server": http.StatusOK, "for another": http.StatusUnauthorized,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			get := serve(t, tc.audiences)
			tokens := map[string]string{
				"for it": dedicated, "for it and another": both, "for the API server": ownToken, "for another": other,
			}
			for name, bearer := range tokens {
				g.Expect(get("/metrics", bearer)).To(Equal(tc.want[name]), "a token of the scraper %s", name)
			}
		})
	}
}

// TestFilterRefusesForgedAndExpiredTokens checks that a token with the
// claims of the scraper is served only when the API server's own key
// signed it and it has not expired. The control: the scraper's token
// signed again with that key, unchanged, is served.
func TestFilterRefusesForgedAndExpiredTokens(t *testing.T) {
	g := NewWithT(t)
	cs := bindScraper(t)
	get := serve(t, nil)
	scraper := token(t, cs, "scraper")
	// envtest's kube-apiserver signs ServiceAccount tokens with this key
	// (--service-account-signing-key-file).
	apiServerKey := ecdsaKey(t, filepath.Join(env.ControlPlane.GetAPIServer().CertDir, "sa-signer.key"))
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	now := time.Now()
	expire := func(claims map[string]any) {
		claims["iat"], claims["nbf"] = now.Add(-2*time.Hour).Unix(), now.Add(-2*time.Hour).Unix()
		claims["exp"] = now.Add(-time.Hour).Unix()
	}

	g.Expect(get("/metrics", resign(t, scraper, apiServerKey, nil))).To(Equal(http.StatusOK),
		"signed again by the API server's key")
	g.Expect(get("/metrics", resign(t, scraper, apiServerKey, expire))).To(Equal(http.StatusUnauthorized),
		"expired an hour ago, signed by the API server's key")
	g.Expect(get("/metrics", resign(t, scraper, otherKey, nil))).To(Equal(http.StatusUnauthorized),
		"signed by another key")
	g.Expect(get("/metrics", tamper(t, token(t, cs, "stranger"), scraper))).To(Equal(http.StatusUnauthorized),
		"the stranger's signature under the scraper's claims")
}

// TestFilterAPIServerUnreachable checks that a token that cannot be reviewed
// is a server error, not a rejection.
func TestFilterAPIServerUnreachable(t *testing.T) {
	g := NewWithT(t)
	unreachable := rest.CopyConfig(cfg)
	unreachable.Host = "https://127.0.0.1:1"
	httpClient, err := rest.HTTPClientFor(unreachable)
	g.Expect(err).NotTo(HaveOccurred())
	filter, err := metricsauth.FilterProvider(nil)(unreachable, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	handler, err := filter(logr.Discard(), http.NotFoundHandler())
	g.Expect(err).NotTo(HaveOccurred())
	req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer some-token")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	g.Expect(rec.Code).To(Equal(http.StatusInternalServerError))
}
