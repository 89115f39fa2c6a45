//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"sunstrider.cn/operator/internal/metrics/metricstest"
)

// metricsPort is where the local operator serves /metrics (startOperator).
const metricsPort = 18443

// metricsNamespace holds the ServiceAccounts calling the metrics endpoint.
const metricsNamespace = "metrics-e2e"

// TestMetricsEndpointAuthenticatesAndAuthorizes: the local operator serves
// /metrics over HTTPS (--metrics-bind-address=:metricsPort, secure by
// default) only to callers bound to the metrics-reader ClusterRole.
func TestMetricsEndpointAuthenticatesAndAuthorizes(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, metricsNamespace, "serviceaccounts")
	mustSh(t, nil, kubectl, "create", "namespace", metricsNamespace)
	mustSh(t, nil, kubectl, "create", "serviceaccount", "stranger", "-n", metricsNamespace)
	mustSh(t, nil, kubectl, "create", "serviceaccount", "scraper", "-n", metricsNamespace)
	mustSh(t, nil, kubectl, "create", "clusterrolebinding", "metrics-e2e-scraper",
		"--clusterrole=sunstrider-operator-metrics-reader", "--serviceaccount="+metricsNamespace+":scraper")
	t.Cleanup(func() {
		_, _ = sh(t, nil, kubectl, "delete", "clusterrolebinding", "metrics-e2e-scraper", "--ignore-not-found")
		_, _ = sh(t, nil, kubectl, "delete", "namespace", metricsNamespace, "--wait=false")
	})
	token := func(sa string) string {
		return strings.TrimSpace(mustSh(t, nil, kubectl, "create", "token", sa, "-n", metricsNamespace, "--duration=10m"))
	}
	stranger, scraper := token("stranger"), token("scraper")

	// The endpoint serves the operator's certificate, which verifies with
	// the CA of its Secret for the metrics Service's name, as the
	// ServiceMonitor has Prometheus verify it (serviceMonitorScrape).
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: metricsTLS(t, operatorNamespace,
			"sunstrider-operator-controller-manager-metrics-service."+operatorNamespace+".svc"),
	}}
	get := func(bearer string) (int, string, error) {
		url := fmt.Sprintf("https://localhost:%d/metrics", metricsPort)
		req, err := http.NewRequestWithContext(ctx(), http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	status := func(bearer string) func() (int, error) {
		return func() (int, error) {
			code, _, err := get(bearer)
			return code, err
		}
	}

	g.Eventually(status("")).Should(Equal(http.StatusUnauthorized), "no token")
	// 401, not the 500 of controller-runtime's filter (internal/metricsauth).
	g.Eventually(status("not-a-token")).Should(Equal(http.StatusUnauthorized), "a token the API server does not know")
	g.Eventually(status(stranger)).Should(Equal(http.StatusForbidden), "a ServiceAccount without metrics-reader")
	g.Eventually(func(g Gomega) {
		code, body, err := get(scraper)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
	}).Should(Succeed(), "a ServiceAccount bound to metrics-reader")
	// Every metric the Grafana dashboard queries is in the live scrape (the
	// suite's earlier tests made the objects and children whose series the
	// operator's vectors need).
	dashboard, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "dashboard", "sunstrider-operator.json"))
	g.Expect(err).NotTo(HaveOccurred())
	queries, err := metricstest.Queries(dashboard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		_, body, err := get(scraper)
		g.Expect(err).NotTo(HaveOccurred())
		served := map[string]bool{}
		for line := range strings.SplitSeq(body, "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
				served[f[2]] = true
			}
		}
		var missing []string
		for title, exprs := range queries {
			for _, expr := range exprs {
				for _, name := range metricstest.MetricNames(expr) {
					if !metricstest.Served(name, served) {
						missing = append(missing, fmt.Sprintf("%s (panel %q)", name, title))
					}
				}
			}
		}
		g.Expect(missing).To(BeEmpty(), "dashboard metrics not in the scrape")
	}, "30s").Should(Succeed())
	// docs/reference/metrics-and-events.md documents every metric family
	// the operator serves (but the Go runtime's and the process'), and
	// every one of the operator's own it documents is served.
	reference, err := os.ReadFile(filepath.Join(root, "docs", "reference", "metrics-and-events.md"))
	g.Expect(err).NotTo(HaveOccurred())
	documented := documentedMetrics(string(reference))
	g.Expect(documented).To(HaveKey("sunstrider_operator_objects"), "the reference's metric tables were not found")
	g.Eventually(func(g Gomega) {
		_, body, err := get(scraper)
		g.Expect(err).NotTo(HaveOccurred())
		var undocumented []string
		served := map[string]bool{}
		for line := range strings.SplitSeq(body, "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || f[0] != "#" || f[1] != "TYPE" {
				continue
			}
			served[f[2]] = true
			if !strings.HasPrefix(f[2], "go_") && !strings.HasPrefix(f[2], "process_") && !documented[f[2]] {
				undocumented = append(undocumented, f[2])
			}
		}
		g.Expect(undocumented).To(BeEmpty(), "served but not in docs/reference/metrics-and-events.md")
		for name := range documented {
			if strings.HasPrefix(name, "sunstrider_operator_") {
				g.Expect(served).To(HaveKey(name), "documented but not served")
			}
		}
	}, "30s").Should(Succeed())
	// Plain HTTP is not served.
	resp, err := httpClient.Get(fmt.Sprintf("http://localhost:%d/metrics", metricsPort))
	if err == nil {
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP on the TLS port")
	}
}

// metricsTLS verifies the metrics server's certificate for serverName with
// the CA in ca.crt of the operator's certificate Secret in namespace.
func metricsTLS(t *testing.T, namespace, serverName string) *tls.Config {
	t.Helper()
	secret := &corev1.Secret{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: namespace, Name: "sunstrider-operator-webhook-server-cert"},
			secret)).To(Succeed())
		g.Expect(secret.Data).To(HaveKey("ca.crt"))
	}).Should(Succeed())
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		t.Fatalf("no certificate in ca.crt of %s/%s", namespace, secret.Name)
	}
	return &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}
}

// TestServiceMonitorScrapes does what Prometheus does with the ServiceMonitor
// of config/prometheus (whose CRD this cluster lacks): with the binding it
// comes with applied and the ServiceAccount it binds (kube-prometheus'
// Prometheus), it scrapes the operator with a token of that ServiceAccount
// as the kubelet mounts it in Prometheus' Pod (the API server's audience,
// short-lived), which the scrape class the ServiceMonitor names sends; a
// token of it for another audience is refused. It verifies the certificate with
// the CA ConfigMap and server name it names. A client expecting another name is
// refused at the handshake.
func TestServiceMonitorScrapes(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, operatorNamespace, "serviceaccounts")
	dir := filepath.Join(t.TempDir(), "config")
	g.Expect(os.CopyFS(dir, os.DirFS(filepath.Join(root, "config")))).To(Succeed())
	kustomization := filepath.Join(dir, "default", "kustomization.yaml")
	data, err := os.ReadFile(kustomization)
	g.Expect(err).NotTo(HaveOccurred())
	text := strings.Replace(strings.Replace(string(data), "\n#components:\n", "\ncomponents:\n", 1),
		"\n#- ../prometheus\n", "\n- ../prometheus\n", 1)
	g.Expect(text).To(ContainSubstring("\n- ../prometheus\n"))
	g.Expect(os.WriteFile(kustomization, []byte(text), 0o600)).To(Succeed())
	built := mustSh(t, nil, kustomize, "build", filepath.Join(dir, "default"))

	var monitor *monitoringv1.ServiceMonitor
	var binding *rbacv1.ClusterRoleBinding
	var bindingDoc string
	for doc := range strings.SplitSeq(built, "\n---\n") {
		var meta metav1.PartialObjectMetadata
		g.Expect(yaml.Unmarshal([]byte(doc), &meta)).To(Succeed())
		switch meta.Kind {
		case "ServiceMonitor":
			monitor = &monitoringv1.ServiceMonitor{}
			g.Expect(yaml.UnmarshalStrict([]byte(doc), monitor)).To(Succeed())
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			g.Expect(yaml.UnmarshalStrict([]byte(doc), b)).To(Succeed())
			if b.RoleRef.Name == "sunstrider-operator-metrics-reader" {
				g.Expect(binding).To(BeNil(), "one binding of metrics-reader")
				binding, bindingDoc = b, doc
			}
		}
	}
	g.Expect(monitor).NotTo(BeNil())
	g.Expect(monitor.Spec.ScrapeClassName).To(HaveValue(Equal("sunstrider-operator")))
	g.Expect(binding).NotTo(BeNil(), "config/prometheus binds Prometheus' ServiceAccount to metrics-reader")
	g.Expect(binding.Subjects).To(HaveLen(1))
	prometheus := binding.Subjects[0]
	g.Expect(prometheus.Kind).To(Equal(rbacv1.ServiceAccountKind))
	// Prometheus' namespace and ServiceAccount, as kube-prometheus makes
	// them, and the binding.
	err = admin.Get(ctx(), client.ObjectKey{Name: prometheus.Namespace}, &corev1.Namespace{})
	if apierrors.IsNotFound(err) {
		mustSh(t, nil, kubectl, "create", "namespace", prometheus.Namespace)
		t.Cleanup(func() { _, _ = sh(t, nil, kubectl, "delete", "namespace", prometheus.Namespace, "--wait=false") })
	} else {
		g.Expect(err).NotTo(HaveOccurred())
	}
	mustSh(t, nil, kubectl, "create", "serviceaccount", prometheus.Name, "-n", prometheus.Namespace)
	t.Cleanup(func() {
		_, _ = sh(t, nil, kubectl, "delete", "serviceaccount", prometheus.Name, "-n", prometheus.Namespace,
			"--ignore-not-found")
	})
	mustSh(t, []byte(bindingDoc), kubectl, "apply", "--server-side", "-f", "-")
	t.Cleanup(func() { _, _ = sh(t, []byte(bindingDoc), kubectl, "delete", "--ignore-not-found", "-f", "-") })

	ep := monitor.Spec.Endpoints[0]
	g.Expect(ep.Authorization).To(BeNil(), "the scrape class sends Prometheus' own token")
	g.Expect(ep.TLSConfig).NotTo(BeNil())
	token := func(extra ...string) string {
		args := append([]string{"create", "token", prometheus.Name, "-n", prometheus.Namespace, "--duration=10m"},
			extra...)
		return strings.TrimSpace(mustSh(t, nil, kubectl, args...))
	}
	// As the kubelet mounts it in Prometheus' Pod (the API server's
	// audience), and for another audience.
	own, otherAudience := token(), token("--audience=sunstrider-operator-metrics")
	// The CA from the ConfigMap it names (no Secret), which the manager
	// keeps equal to its CA.
	g.Expect(ep.TLSConfig.CA.Secret).To(BeNil(), "the CA is read from a ConfigMap, not a Secret")
	g.Expect(ep.TLSConfig.CA.ConfigMap).NotTo(BeNil())
	ca := &corev1.ConfigMap{}
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: monitor.Namespace, Name: ep.TLSConfig.CA.ConfigMap.Name},
			ca)).To(Succeed())
		g.Expect(ca.Data).To(HaveKey(ep.TLSConfig.CA.ConfigMap.Key))
	}).Should(Succeed())
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM([]byte(ca.Data[ep.TLSConfig.CA.ConfigMap.Key]))).To(BeTrue())

	scrape := func(serverName, bearer string) (int, string, error) {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12,
		}}}
		req, err := http.NewRequestWithContext(ctx(), http.MethodGet,
			fmt.Sprintf("https://localhost:%d%s", metricsPort, ep.Path), nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	g.Eventually(func(g Gomega) {
		code, body, err := scrape(*ep.TLSConfig.ServerName, own)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring("sunstrider_operator_build_info"))
	}).Should(Succeed(), "scraped as the ServiceMonitor says")
	code, _, err := scrape(*ep.TLSConfig.ServerName, otherAudience)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusUnauthorized), "a token of Prometheus for another audience")
	_, _, err = scrape("another-service."+operatorNamespace+".svc", own)
	var verr *tls.CertificateVerificationError
	g.Expect(errors.As(err, &verr)).To(BeTrue(), "a name the certificate does not hold: %v", err)
}

// documentedMetrics returns the metric names the reference's tables list:
// the backquoted names of a row's first cell.
func documentedMetrics(doc string) map[string]bool {
	names := map[string]bool{}
	name := regexp.MustCompile("`([a-z_]+)`")
	for line := range strings.SplitSeq(doc, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			if strings.Contains(m[1], "_") {
				names[m[1]] = true
			}
		}
	}
	return names
}
