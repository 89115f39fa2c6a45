package metrics_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"sunstrider.cn/operator/internal/testutil"
)

// The certificate Secret, CA ConfigMap and metrics Service of both installs:
// the defaults of the manager's --webhook-secret-name,
// --webhook-ca-configmap-name and --metrics-service-name.
const (
	certSecret     = "sunstrider-operator-webhook-server-cert"
	caConfigMap    = "sunstrider-operator-webhook-ca-bundle"
	metricsService = "sunstrider-operator-controller-manager-metrics-service"
)

// rendered is what one way of installing the operator renders: documents by
// kind and name.
type rendered map[string]map[string][]byte

func parseRendered(t *testing.T, manifests []byte) rendered {
	t.Helper()
	out := rendered{}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(manifests), -1) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if meta.Kind == "" {
			continue
		}
		if out[meta.Kind] == nil {
			out[meta.Kind] = map[string][]byte{}
		}
		out[meta.Kind][meta.Metadata.Name] = []byte(doc)
	}
	return out
}

// get strictly decodes the kind and name into obj: a field its Go type (the
// API's) does not have fails, as a misspelt field would be dropped or refused
// by the API server.
func (r rendered) get(g Gomega, kind, name string, obj any) {
	doc, ok := r[kind][name]
	g.Expect(ok).To(BeTrue(), "%s %s rendered (have %v)", kind, name, keys(r[kind]))
	g.Expect(yaml.UnmarshalStrict(doc, obj)).To(Succeed(), "%s %s", kind, name)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// expectVerifiedScrape checks what a Prometheus given the rendered
// ServiceMonitor does: it verifies the metrics server's certificate with the
// ca.crt of the ConfigMap the manager publishes its CA in (installed with
// it), for the metrics Service's name (the token: expectPrometheusOwnToken); no
// deprecated bearerTokenFile, no insecureSkipVerify. It returns the name the
// scrape verifies.
func expectVerifiedScrape(g Gomega, r rendered, namespace string) string {
	if len(r["ServiceMonitor"]) != 1 {
		g.Expect(keys(r["ServiceMonitor"])).To(HaveLen(1), "one ServiceMonitor")
	}
	var sm monitoringv1.ServiceMonitor
	r.get(g, "ServiceMonitor", keys(r["ServiceMonitor"])[0], &sm)
	g.Expect(sm.Namespace).To(Equal(namespace))
	g.Expect(sm.Spec.Endpoints).To(HaveLen(1))
	ep := sm.Spec.Endpoints[0]
	g.Expect(ep.Scheme).NotTo(BeNil())
	g.Expect(string(*ep.Scheme)).To(Equal("https"))
	g.Expect(ep.BearerTokenFile).To(BeEmpty(), "bearerTokenFile is deprecated")   //nolint:staticcheck // checked absent
	g.Expect(ep.BearerTokenSecret).To(BeNil(), "bearerTokenSecret is deprecated") //nolint:staticcheck // checked absent

	// The certificate: verified, for the metrics Service (the manager
	// serves metrics with its webhook certificate: --metrics-cert-path =
	// --webhook-cert-path).
	g.Expect(ep.TLSConfig).NotTo(BeNil())
	g.Expect(ep.TLSConfig.InsecureSkipVerify == nil || !*ep.TLSConfig.InsecureSkipVerify).To(BeTrue(), "insecureSkipVerify")
	// The CA comes from the ConfigMap the manager publishes: the scraper
	// reads no Secret.
	g.Expect(ep.TLSConfig.CA.Secret).To(BeNil(), "tlsConfig.ca from no Secret")
	g.Expect(ep.TLSConfig.CA.ConfigMap).NotTo(BeNil(), "tlsConfig.ca from a ConfigMap")
	g.Expect(ep.TLSConfig.CA.ConfigMap.Name).To(Equal(caConfigMap))
	g.Expect(ep.TLSConfig.CA.ConfigMap.Key).To(Equal("ca.crt"))
	var cm corev1.ConfigMap
	r.get(g, "ConfigMap", caConfigMap, &cm)
	g.Expect(cm.Namespace).To(Equal(namespace), "the CA ConfigMap beside the ServiceMonitor")
	g.Expect(ep.TLSConfig.ServerName).NotTo(BeNil())
	g.Expect(*ep.TLSConfig.ServerName).To(Equal(metricsService + "." + namespace + ".svc"))
	var svc corev1.Service
	r.get(g, "Service", metricsService, &svc)
	g.Expect(svc.Spec.Ports).To(ContainElement(HaveField("Name", ep.Port)))
	var d appsv1.Deployment
	r.get(g, "Deployment", "sunstrider-operator-controller-manager", &d)
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElements(
		"--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs",
		"--metrics-cert-path=/tmp/k8s-webhook-server/serving-certs"))
	return *ep.TLSConfig.ServerName
}

// scrapeClass is the scrape class both installs' ServiceMonitor names by
// default: the one docs/monitoring.md has users define on their Prometheus,
// sending Prometheus' own ServiceAccount token.
const scrapeClass = "sunstrider-operator"

// kubePrometheus is the ServiceAccount of kube-prometheus' Prometheus, which
// both installs bind to metrics-reader by default.
var kubePrometheus = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "monitoring", Name: "prometheus-k8s"}

// expectPrometheusOwnToken checks that the rendered ServiceMonitor sends no
// token of its own but names the scrape class that sends Prometheus' own
// (short-lived, projected by the kubelet), that nothing rendered is a
// long-lived token (a service-account-token Secret) and that prometheus,
// Prometheus' ServiceAccount, is bound to one ClusterRole, which allows GET
// /metrics and nothing else (zero Subject: the binding is not checked).
func expectPrometheusOwnToken(g Gomega, r rendered, prometheus rbacv1.Subject) {
	var sm monitoringv1.ServiceMonitor
	r.get(g, "ServiceMonitor", keys(r["ServiceMonitor"])[0], &sm)
	g.Expect(sm.Spec.ScrapeClassName).To(HaveValue(Equal(scrapeClass)))
	ep := sm.Spec.Endpoints[0]
	g.Expect(ep.Authorization).To(BeNil(), "the scrape class's authorization applies only without the endpoint's")
	g.Expect(ep.BasicAuth).To(BeNil())
	g.Expect(ep.OAuth2).To(BeNil())
	for name := range r["Secret"] {
		var secret corev1.Secret
		r.get(g, "Secret", name, &secret)
		g.Expect(secret.Type).NotTo(Equal(corev1.SecretTypeServiceAccountToken), "Secret %s", name)
	}

	var roles []string
	for name := range r["ClusterRoleBinding"] {
		var b rbacv1.ClusterRoleBinding
		r.get(g, "ClusterRoleBinding", name, &b)
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind || s.Name != prometheus.Name || s.Namespace != prometheus.Namespace {
				continue
			}
			roles = append(roles, b.RoleRef.Name)
			var role rbacv1.ClusterRole
			r.get(g, "ClusterRole", b.RoleRef.Name, &role)
			g.Expect(role.Rules).To(Equal([]rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}),
				"what Prometheus' ServiceAccount may do")
		}
	}
	if prometheus == (rbacv1.Subject{}) {
		return
	}
	g.Expect(roles).To(HaveLen(1), "Prometheus' ServiceAccount %s/%s is bound to one ClusterRole",
		prometheus.Namespace, prometheus.Name)
}

// expectCertManagerCovers checks that cert-manager's Certificate writes
// the Secret the ServiceMonitor reads, valid for the name it verifies.
func expectCertManagerCovers(g Gomega, r rendered, serverName string) {
	var cert struct {
		Spec struct {
			DNSNames   []string `json:"dnsNames"`
			SecretName string   `json:"secretName"`
		} `json:"spec"`
	}
	g.Expect(r["Certificate"]).To(HaveLen(1))
	g.Expect(yaml.Unmarshal(r["Certificate"][keys(r["Certificate"])[0]], &cert)).To(Succeed())
	g.Expect(cert.Spec.SecretName).To(Equal(certSecret))
	g.Expect(cert.Spec.DNSNames).To(ContainElement(serverName))
}

// kustomizeWith builds config/default as a user who uncommented components
// there does: on a copy of config/.
func kustomizeWith(t *testing.T, root string, components ...string) []byte {
	t.Helper()
	kustomize := testutil.Tool(t, root, "KUSTOMIZE", "kustomize")
	dir := filepath.Join(t.TempDir(), "config")
	g := NewWithT(t)
	g.Expect(os.CopyFS(dir, os.DirFS(filepath.Join(root, "config")))).To(Succeed())
	path := filepath.Join(dir, "default", "kustomization.yaml")
	data, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	text := strings.Replace(string(data), "\n#components:\n", "\ncomponents:\n", 1)
	for _, c := range components {
		line := "\n#- " + c + "\n"
		g.Expect(text).To(ContainSubstring(line), "config/default/kustomization.yaml offers %s", c)
		text = strings.Replace(text, line, "\n- "+c+"\n", 1)
	}
	g.Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	var stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", filepath.Join(dir, "default"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	g.Expect(err).NotTo(HaveOccurred(), "kustomize build with %v:\n%s", components, stderr.String())
	return out
}

// helmRender renders the whole chart in namespace with set.
func helmRender(t *testing.T, root, namespace string, set ...string) ([]byte, error) {
	t.Helper()
	args := make([]string, 0, 7+2*len(set))
	args = append(args, "template", "sunstrider-operator", filepath.Join(root, "dist/chart"),
		"--namespace", namespace, "--kube-version", "1.31.0")
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(testutil.Tool(t, root, "HELM", "helm"), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, &renderError{err: err, stderr: stderr.String()}
	}
	return out, nil
}

type renderError struct {
	err    error
	stderr string
}

func (e *renderError) Error() string { return e.err.Error() + ": " + e.stderr }

// TestServiceMonitorVerifiesTheMetricsCertificate renders the ServiceMonitor
// of each install (make deploy with config/prometheus, alone and with
// cert-manager; the chart with serviceMonitor.enabled, with either
// certManagement) and checks what Prometheus would do with it
// (expectVerifiedScrape). test/e2e/metrics_test.go scrapes a running
// manager the same way.
func TestServiceMonitorVerifiesTheMetricsCertificate(t *testing.T) {
	root := repoRoot(t)
	t.Run("kustomize", func(t *testing.T) {
		g := NewWithT(t)
		r := parseRendered(t, kustomizeWith(t, root, "../prometheus"))
		expectVerifiedScrape(g, r, "sunstrider-operator-system")
		expectPrometheusOwnToken(g, r, kubePrometheus)
	})
	t.Run("kustomize with cert-manager", func(t *testing.T) {
		g := NewWithT(t)
		r := parseRendered(t, kustomizeWith(t, root, "../components/cert-manager", "../prometheus"))
		expectCertManagerCovers(g, r, expectVerifiedScrape(g, r, "sunstrider-operator-system"))
		expectPrometheusOwnToken(g, r, kubePrometheus)
	})
	t.Run("chart", func(t *testing.T) {
		g := NewWithT(t)
		out, err := helmRender(t, root, "monitoring-test", "serviceMonitor.enabled=true")
		g.Expect(err).NotTo(HaveOccurred())
		r := parseRendered(t, out)
		expectVerifiedScrape(g, r, "monitoring-test")
		expectPrometheusOwnToken(g, r, kubePrometheus)
	})
	t.Run("chart with cert-manager", func(t *testing.T) {
		g := NewWithT(t)
		out, err := helmRender(t, root, "monitoring-test", "serviceMonitor.enabled=true", "certManagement=cert-manager")
		g.Expect(err).NotTo(HaveOccurred())
		r := parseRendered(t, out)
		expectCertManagerCovers(g, r, expectVerifiedScrape(g, r, "monitoring-test"))
		expectPrometheusOwnToken(g, r, kubePrometheus)
	})
	t.Run("chart without webhooks", func(t *testing.T) {
		// No certificate to verify: refused, saying why.
		_, err := helmRender(t, root, "monitoring-test", "serviceMonitor.enabled=true", "webhook.enabled=false")
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("serviceMonitor.enabled needs webhook.enabled")))
	})
}

// TestChartBindsTheNamedPrometheus: the chart binds the ServiceAccount its
// values name to metrics-reader, none when the name is empty, and refuses a
// name without a namespace, naming the value.
func TestChartBindsTheNamedPrometheus(t *testing.T) {
	root := repoRoot(t)
	t.Run("named", func(t *testing.T) {
		g := NewWithT(t)
		out, err := helmRender(t, root, "operators", "serviceMonitor.enabled=true",
			"serviceMonitor.scrapeClass="+scrapeClass,
			"serviceMonitor.prometheusServiceAccount.name=kps-prometheus",
			"serviceMonitor.prometheusServiceAccount.namespace=observability")
		g.Expect(err).NotTo(HaveOccurred())
		r := parseRendered(t, out)
		expectPrometheusOwnToken(g, r, rbacv1.Subject{
			Kind: rbacv1.ServiceAccountKind, Namespace: "observability", Name: "kps-prometheus"})
		for name := range r["ClusterRoleBinding"] {
			var b rbacv1.ClusterRoleBinding
			r.get(g, "ClusterRoleBinding", name, &b)
			g.Expect(b.Subjects).NotTo(ContainElement(kubePrometheus), name)
		}
	})
	t.Run("no name", func(t *testing.T) {
		g := NewWithT(t)
		out, err := helmRender(t, root, "monitoring-test", "serviceMonitor.enabled=true",
			"serviceMonitor.prometheusServiceAccount.name=")
		g.Expect(err).NotTo(HaveOccurred())
		r := parseRendered(t, out)
		expectPrometheusOwnToken(g, r, rbacv1.Subject{})
		g.Expect(r["ClusterRole"]).To(HaveKey("sunstrider-operator-metrics-reader"))
		for name := range r["ClusterRoleBinding"] {
			var b rbacv1.ClusterRoleBinding
			r.get(g, "ClusterRoleBinding", name, &b)
			g.Expect(b.RoleRef.Name).NotTo(Equal("sunstrider-operator-metrics-reader"), "%s binds metrics-reader", name)
		}
	})
	t.Run("a name without a namespace", func(t *testing.T) {
		_, err := helmRender(t, root, "monitoring-test", "serviceMonitor.enabled=true",
			"serviceMonitor.prometheusServiceAccount.namespace=")
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring("serviceMonitor.prometheusServiceAccount.namespace")))
	})
}

// TestNothingShippedSkipsVerification: no manifest the project ships (kustomize
// bases and components, the chart, the installer, the OLM bundle) turns
// certificate verification off.
func TestNothingShippedSkipsVerification(t *testing.T) {
	g := NewWithT(t)
	root := repoRoot(t)
	var found []string
	for _, dir := range []string{"config", "dist", "bundle"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, bad := range []string{"insecureSkipVerify", "insecure-skip-tls-verify", "bearerTokenFile"} {
				if bytes.Contains(data, []byte(bad)) {
					rel, _ := filepath.Rel(root, path)
					found = append(found, rel+": "+bad)
				}
			}
			return nil
		})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(found).To(BeEmpty())
}
