//go:build e2e

package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

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

	// The endpoint's certificate is self-signed and the request stays on
	// this machine.
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // localhost
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
	// Plain HTTP is not served.
	resp, err := httpClient.Get(fmt.Sprintf("http://localhost:%d/metrics", metricsPort))
	if err == nil {
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP on the TLS port")
	}
}
