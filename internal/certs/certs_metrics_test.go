package certs

import (
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/metrics/metricstest"
)

// The expiry gauge is the NotAfter of the certificate file the webhook
// server serves, read at each scrape: absent before there is one, moved by
// a rotation (the cert writer's atomic replace of the file).
func TestWebhookCertificateExpiryGauge(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	collector := metrics.NewCertificateExpiryCollector(func() (time.Time, error) {
		return NotAfter(filepath.Join(dir, certName))
	})
	crmetrics.Registry.MustRegister(collector)
	t.Cleanup(func() { crmetrics.Registry.Unregister(collector) })
	expiry := func() float64 {
		v, err := metricstest.Value(crmetrics.Registry, metrics.WebhookCertificateExpiry)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
	names := func() []string {
		n, err := metricstest.Names(crmetrics.Registry)
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
	g.Expect(names()).NotTo(ContainElement(metrics.WebhookCertificateExpiry))

	now := time.Now().Truncate(time.Second)
	for _, issued := range []time.Time{now, now.Add(30 * 24 * time.Hour)} {
		_, cert, key, err := newLocalCert([]string{"localhost"}, issued)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(writeCert(dir, cert, key)).To(Succeed())
		g.Expect(expiry()).To(Equal(float64(issued.Add(localValidity).Unix())))
	}
}
