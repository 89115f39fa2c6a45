package apps

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/metrics/metricstest"
	"sunstrider.cn/operator/internal/testutil"
)

// Every metric the Grafana dashboard queries is served by the operator:
// this suite's manager has run a controller, so controller-runtime's
// registry holds its reconcile, work queue, API client, Go and process
// metrics. The operator's own are named by internal/metrics (a vector
// without a series yet is not gathered); leader election's metric needs
// leader election, which the suite does not run (test/e2e checks all of
// them against a live scrape).
func TestDashboardQueriesServedMetrics(t *testing.T) {
	g := testutil.NewG(t)
	root, err := testutil.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(root, "config/prometheus/dashboard/sunstrider-operator.json"))
	g.Expect(err).NotTo(HaveOccurred())
	queries, err := metricstest.Queries(data)
	g.Expect(err).NotTo(HaveOccurred())

	// A reconcile of this suite's controller makes its vectors' series.
	createSeedSample(t, g)
	names, err := metricstest.Names(crmetrics.Registry)
	g.Expect(err).NotTo(HaveOccurred())
	served := map[string]bool{"leader_election_master_status": true, "sunstrider_operator_build_info": true}
	for _, n := range append(names, metrics.ChildWritesTotal, metrics.ApplicationReadySeconds, metrics.Objects,
		metrics.WebhookCertificateExpiry, metrics.ConfigurationGeneration) {
		served[n] = true
	}
	for title, exprs := range queries {
		for _, expr := range exprs {
			for _, name := range metricstest.MetricNames(expr) {
				g.Expect(metricstest.Served(name, served)).To(BeTrue(),
					"panel %q queries %s, which the operator does not serve", title, name)
			}
		}
	}
}
