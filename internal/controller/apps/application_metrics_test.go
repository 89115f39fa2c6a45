package apps

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/metrics/metricstest"
	"sunstrider.cn/operator/internal/testutil"
)

// metricValue reads a metric of the operator from controller-runtime's
// registry, the one /metrics serves (metricstest.Value).
func metricValue(g Gomega, name string, labels ...string) float64 {
	v, err := metricstest.Value(crmetrics.Registry, name, labels...)
	g.Expect(err).NotTo(HaveOccurred())
	return v
}

// objectsGaugeOf returns a registry serving, for the test, the Objects
// gauge of Applications read from a cache of namespace ns alone (other
// tests' Applications stay in theirs), registered as the manager
// registers it.
func objectsGaugeOf(t *testing.T, ns string) prometheus.Gatherer {
	t.Helper()
	opts := machinery.CacheOptions(webappv1.LabelGuestbook)
	opts.Scheme = suite.Scheme
	opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	c, err := cache.New(suite.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = c.Start(ctx) }()
	t.Cleanup(cancel)
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, metrics.Options{Cache: c, Kinds: []metrics.Kind{metrics.Application}}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// The operator's metrics move as the Application's life says: children
// created, updated, restored; the Objects gauge by Ready status and
// reason; one observation of the time to Ready per Application.
func TestApplicationMetrics(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	gauge := objectsGaugeOf(t, ns)
	writes := func(kind, action string) func(Gomega) float64 {
		return func(g Gomega) float64 {
			return metricValue(g, metrics.ChildWritesTotal, "kind", kind, "action", action)
		}
	}
	objects := func(status, reason string) func(Gomega) float64 {
		return func(g Gomega) float64 {
			labels := []string{"kind", "Application", "status", status}
			if reason != "" {
				labels = append(labels, "reason", reason)
			}
			v, err := metricstest.Value(gauge, metrics.Objects, labels...)
			g.Expect(err).NotTo(HaveOccurred())
			return v
		}
	}
	readyObservations := func(g Gomega) float64 { return metricValue(g, metrics.ApplicationReadySeconds) }

	createdDeployments, createdServices := writes("Deployment", "created")(g), writes("Service", "created")(g)
	restoredServices, updatedDeployments := writes("Service", "restored")(g), writes("Deployment", "updated")(g)
	observed := readyObservations(g)

	app := seedSample(ns)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(writes("Deployment", "created")).Should(Equal(createdDeployments + 1))
	g.Eventually(writes("Service", "created")).Should(Equal(createdServices + 1))
	g.Eventually(objects("False", "")).Should(Equal(1.0))
	g.Expect(readyObservations(g)).To(Equal(observed))

	markDeploymentAvailable(g, app)
	g.Eventually(objects("True", "")).Should(Equal(1.0))
	g.Expect(objects("False", "")(g)).To(BeZero())
	g.Eventually(readyObservations).Should(Equal(observed + 1))

	t.Run("a child changed by someone else is counted as restored", func(t *testing.T) {
		g := testutil.NewG(t)
		patchAs(g, getService(g, app), types.MergePatchType, `{"spec":{"selector":{"hijack":"yes"}}}`)
		g.Eventually(writes("Service", "restored")).Should(Equal(restoredServices + 1))
	})

	t.Run("a new spec is counted as updated, and Ready again is not observed again", func(t *testing.T) {
		g := testutil.NewG(t)
		g.Eventually(func(g Gomega) {
			current := getApp(g, app)
			current.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:1.27"
			g.Expect(k8sClient.Update(ctx, current)).To(Succeed())
		}).Should(Succeed())
		// At least one: under a loaded machine a reconcile reading the
		// Deployment from a cache not yet at its own write writes it again,
		// also as updated (seen in CI: +3).
		g.Eventually(writes("Deployment", "updated")).Should(BeNumerically(">", updatedDeployments))
		g.Eventually(objects("False", sunappsv1.ReasonRollingOut)).Should(Equal(1.0))
		g.Eventually(func(g Gomega) { markDeploymentAvailable(g, app) }).Should(Succeed())
		g.Eventually(objects("True", "")).Should(Equal(1.0))
		g.Consistently(readyObservations, "1s").Should(Equal(observed + 1))
	})

	t.Run("a parent blocked by a foreign child is counted by reason ResourceConflict", func(t *testing.T) {
		g := testutil.NewG(t)
		foreign := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "blocked", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"x": "y"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
				},
			},
		}
		g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
		g.Expect(k8sClient.Create(ctx, minimalApp(ns, "blocked"))).To(Succeed())
		g.Eventually(objects("False", sunappsv1.ReasonResourceConflict)).Should(Equal(1.0))
		g.Expect(objects("True", "")(g)).To(Equal(1.0))

		g.Expect(k8sClient.Delete(ctx, foreign)).To(Succeed())
		g.Eventually(objects("False", sunappsv1.ReasonResourceConflict)).Should(BeZero())
	})
}
