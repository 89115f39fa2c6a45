package config

import (
	"testing"

	. "github.com/onsi/gomega"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/metrics/metricstest"
)

// The configuration generation gauge follows the generation the controller
// put in effect (status.observedGeneration), as the manager registers it
// (from a reader of the OperatorConfiguration).
func TestConfigurationGenerationGauge(t *testing.T) {
	g := newG(t)
	resetAtEnd(t)
	collector := metrics.NewConfigurationCollector(k8sClient)
	crmetrics.Registry.MustRegister(collector)
	t.Cleanup(func() { crmetrics.Registry.Unregister(collector) })
	generation := func(g Gomega) float64 {
		v, err := metricstest.Value(crmetrics.Registry, metrics.ConfigurationGeneration)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}

	first := setSpec(g, configv1alpha1.OperatorConfigurationSpec{ConflictRecheckInterval: "1m"})
	g.Eventually(generation).Should(Equal(float64(first)))
	second := setSpec(g, configv1alpha1.OperatorConfigurationSpec{ConflictRecheckInterval: "2m"})
	g.Expect(second).To(BeNumerically(">", first))
	g.Eventually(generation).Should(Equal(float64(second)))
}
