package certs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/certs"
)

// TestPublishCACopiesTheMountedCA is --cert-mode=external with
// cert-manager's Secret mounted in the certificate directory: the manager,
// as the shipped ServiceAccount under the write policy, publishes nothing
// while there is no ca.crt, then keeps the ConfigMap's ca.crt equal to the
// file's through a renewal.
func TestPublishCACopiesTheMountedCA(t *testing.T) {
	// Each test runs its own control plane: they wait on it side by side.
	t.Parallel()
	g := NewWithT(t)
	cl := startCluster(t)
	ctx := context.Background()
	operator := cl.installShipped(t)

	certDir := t.TempDir()
	mgr := cl.newManager(t, operator, certDir, freePort(t))
	o := selfOptions(certDir)
	o.CheckInterval = 100 * time.Millisecond
	g.Expect(certs.PublishCA(mgr, o)).To(Succeed())
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		g.Expect(<-done).To(Succeed())
	})

	published := func() string {
		cm := &corev1.ConfigMap{}
		g.Expect(cl.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: caConfigMapName}, cm)).To(Succeed())
		return cm.Data["ca.crt"]
	}
	// The publisher, a leader's runnable, checks every 100 ms: the window
	// starts once it has checked, and it must check again within it.
	caFile := filepath.Join(certDir, "ca.crt")
	g.Eventually(func() int { return noCA.checks(caFile) }, 10*time.Second).ShouldNot(BeZero(), "the publisher checks")
	checked := noCA.checks(caFile)
	g.Consistently(published, time.Second, 100*time.Millisecond).Should(BeEmpty(), "no ca.crt, nothing published")
	g.Expect(noCA.checks(caFile)).To(BeNumerically(">", checked), "the publisher checked during the window")
	for _, names := range [][]string{{"first"}, {"renewed"}} {
		ca, _, _, _ := legacyCertificates(t, names)
		g.Expect(os.WriteFile(caFile, ca, 0o600)).To(Succeed())
		g.Eventually(published, 10*time.Second, 100*time.Millisecond).Should(Equal(string(ca)))
	}
}
