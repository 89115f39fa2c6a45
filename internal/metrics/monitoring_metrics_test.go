package metrics_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"sunstrider.cn/operator/internal/metrics/metricstest"
	"sunstrider.cn/operator/internal/testutil"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// The kustomize PrometheusRule, the chart's rule file and what the chart
// renders hold the same groups; promtool finds them valid, and its unit
// tests (config/prometheus/rules/alerts_test.yaml) see each alert fire when
// it should and stay silent otherwise.
func TestAlertRules(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	rule := readYAML(t, filepath.Join(root, "config/prometheus/rules/prometheusrule.yaml"))
	spec := rule["spec"].(map[string]any)
	chartFile := readYAML(t, filepath.Join(root, "dist/chart/files/monitoring/prometheus-rules.yaml"))
	g.Expect(chartFile).To(Equal(spec),
		"dist/chart/files/monitoring/prometheus-rules.yaml must hold the spec of config/prometheus/rules/prometheusrule.yaml")

	rendered := helmTemplate(t, root, "templates/prometheusrule.yaml", "prometheusRule.enabled=true")
	out := map[string]any{}
	g.Expect(yaml.Unmarshal(rendered, &out)).To(Succeed())
	g.Expect(out).To(HaveKeyWithValue("kind", "PrometheusRule"))
	g.Expect(out["spec"]).To(Equal(spec), "the chart's PrometheusRule renders other groups")

	promtool := testutil.Tool(t, root, "PROMTOOL", "promtool")
	dir := t.TempDir()
	rules, err := yaml.Marshal(spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o600)).To(Succeed())
	tests, err := os.ReadFile(filepath.Join(root, "config/prometheus/rules/alerts_test.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o600)).To(Succeed())
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "promtool %v:\n%s", args, out)
	}
}

// helmTemplate renders one template of the chart with set; the test fails
// when helm is not built (make helm), as the chart's rendering would go
// unchecked.
func helmTemplate(t *testing.T, root, template string, set ...string) []byte {
	t.Helper()
	path := testutil.Tool(t, root, "HELM", "helm")
	// --kube-version: the chart requires 1.31 or newer, and a helm built by
	// `go install` (bin/helm) assumes v1.20 without a cluster.
	args := make([]string, 0, 7+2*len(set))
	args = append(args, "template", "t", filepath.Join(root, "dist/chart"), "--show-only", template, "--kube-version", "1.31.0")
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// The dashboard is valid JSON with queries in every panel, the chart holds
// the same file and renders it in a ConfigMap Grafana's sidecar loads.
// (internal/controller/apps checks its metric names against a running
// manager's registry; the e2e suite against a live scrape.)
func TestDashboard(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "config/prometheus/dashboard/sunstrider-operator.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Valid(data)).To(BeTrue())
	chartCopy, err := os.ReadFile(filepath.Join(root, "dist/chart/files/monitoring/sunstrider-operator.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(chartCopy)).To(Equal(string(data)),
		"dist/chart/files/monitoring/sunstrider-operator.json must be a copy of config/prometheus/dashboard/sunstrider-operator.json")

	queries, err := metricstest.Queries(data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(queries).NotTo(BeEmpty())
	for title, exprs := range queries {
		for _, expr := range exprs {
			g.Expect(metricstest.MetricNames(expr)).NotTo(BeEmpty(), "panel %q: %s", title, expr)
		}
	}

	rendered := helmTemplate(t, root, "templates/grafana-dashboard.yaml", "grafanaDashboard.enabled=true")
	cm := struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}{}
	g.Expect(yaml.Unmarshal(rendered, &cm)).To(Succeed())
	g.Expect(cm.Metadata.Labels).To(HaveKeyWithValue("grafana_dashboard", "1"))
	g.Expect(cm.Data).To(HaveKey("sunstrider-operator.json"))
	g.Expect(cm.Data["sunstrider-operator.json"]).To(MatchJSON(data))
}

// MetricNames finds the metrics of a query, not its functions, label names,
// strings, ranges or Grafana variables.
func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{job="x"}[$__rate_interval]))`: {
			"controller_runtime_reconcile_time_seconds_bucket"},
		`min(sunstrider_operator_webhook_certificate_expiry_timestamp_seconds) - time() < 7 * 24 * 3600`: {
			"sunstrider_operator_webhook_certificate_expiry_timestamp_seconds"},
		`sum(up{job="a"}) > 0 unless on () sum(leader_election_master_status{name=~"b.*"}) > 1e3`: {
			"up", "leader_election_master_status"},
		`process_resident_memory_bytes or go_memstats_heap_alloc_bytes offset 5m`: {
			"process_resident_memory_bytes", "go_memstats_heap_alloc_bytes"},
	} {
		NewWithT(t).Expect(metricstest.MetricNames(expr)).To(Equal(want), expr)
	}
}
