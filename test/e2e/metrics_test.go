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
// of config/prometheus (whose CRD this cluster lacks): with the objects it
// comes with applied (the scraper's ServiceAccount, its token Secret, which
// the control plane fills in, and its metrics-reader binding), it scrapes the
// operator with the credentials it names and verifies the certificate with
// the CA Secret and server name it names. A client expecting another name is
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
	var scraperObjects []string
	for doc := range strings.SplitSeq(built, "\n---\n") {
		var meta metav1.PartialObjectMetadata
		g.Expect(yaml.Unmarshal([]byte(doc), &meta)).To(Succeed())
		switch {
		case meta.Kind == "ServiceMonitor":
			monitor = &monitoringv1.ServiceMonitor{}
			g.Expect(yaml.UnmarshalStrict([]byte(doc), monitor)).To(Succeed())
		case strings.HasPrefix(meta.Name, "sunstrider-operator-metrics-scraper"):
			scraperObjects = append(scraperObjects, doc)
		}
	}
	g.Expect(monitor).NotTo(BeNil())
	g.Expect(scraperObjects).To(HaveLen(3), "ServiceAccount, token Secret, ClusterRoleBinding")
	objects := []byte(strings.Join(scraperObjects, "\n---\n"))
	mustSh(t, objects, kubectl, "apply", "--server-side", "-f", "-")
	t.Cleanup(func() { _, _ = sh(t, objects, kubectl, "delete", "--ignore-not-found", "-f", "-") })

	ep := monitor.Spec.Endpoints[0]
	g.Expect(ep.Authorization).NotTo(BeNil())
	g.Expect(ep.TLSConfig).NotTo(BeNil())
	var token []byte
	g.Eventually(func(g Gomega) {
		s := &corev1.Secret{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: monitor.Namespace,
			Name: ep.Authorization.Credentials.Name}, s)).To(Succeed())
		token = s.Data[ep.Authorization.Credentials.Key]
		g.Expect(token).NotTo(BeEmpty(), "the control plane filled in the token")
	}).Should(Succeed())
	ca := &corev1.Secret{}
	g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: monitor.Namespace, Name: ep.TLSConfig.CA.Secret.Name},
		ca)).To(Succeed())
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(ca.Data[ep.TLSConfig.CA.Secret.Key])).To(BeTrue())

	scrape := func(serverName string) (int, string, error) {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12,
		}}}
		req, err := http.NewRequestWithContext(ctx(), http.MethodGet,
			fmt.Sprintf("https://localhost:%d%s", metricsPort, ep.Path), nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", ep.Authorization.Type+" "+string(token))
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	g.Eventually(func(g Gomega) {
		code, body, err := scrape(*ep.TLSConfig.ServerName)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring("sunstrider_operator_build_info"))
	}).Should(Succeed(), "scraped as the ServiceMonitor says")
	_, _, err = scrape("another-service." + operatorNamespace + ".svc")
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
