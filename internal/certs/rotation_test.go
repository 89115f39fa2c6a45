package certs_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/certs"
)

// Rotation times of TestSelfManagedCertificateRotatesWhileWebhooksAnswer: a
// serving certificate is valid for certValidity and re-issued once it
// expires within renewBefore, so every ~6 s, and a served one stays valid
// for 14 s after its successor is written: room for the webhook and metrics
// servers to pick the new one up.
const (
	certValidity = 20 * time.Second
	renewBefore  = 14 * time.Second
)

// metricsService is the metrics Service of the test's operator namespace,
// and metricsServerName the name a scraper verifies (a ServiceMonitor's
// tlsConfig.serverName).
const (
	metricsService    = "metrics-service"
	metricsServerName = metricsService + "." + namespace + ".svc"
)

// TestSelfManagedCertificateRotatesWhileWebhooksAnswer runs --cert-mode=self
// (certs.Setup) as the shipped ServiceAccount with the certificate's
// validity forced down to seconds, and keeps writing through the webhooks
// while the serving certificate is re-issued several times: every
// admission is answered by the webhook (allowed, or denied with its own
// message; never a TLS or connection error), the webhook and metrics
// servers serve each new certificate (fingerprint and NotAfter change),
// which verifies against the CA in the ConfigMap (the one a ServiceMonitor
// reads, and the one injected into the webhook configurations) for the
// webhook's and the metrics Service's names; the CA key never reaches the
// serving Secret.
func TestSelfManagedCertificateRotatesWhileWebhooksAnswer(t *testing.T) {
	// Each test runs its own control plane: they wait on it side by side.
	t.Parallel()
	g := NewWithT(t)
	cl := startCluster(t)
	c := cl.client
	ctx := context.Background()
	operator := cl.installShipped(t)

	certDir := filepath.Join(t.TempDir(), "certs")
	probePort, metricsPort := freePort(t), freePort(t)
	// As cmd/main.go with --metrics-cert-path=--webhook-cert-path.
	metricsCert := certs.NewFileCertificate(certDir, "tls.crt", "tls.key")
	mgr, err := ctrl.NewManager(operator, ctrl.Options{
		Scheme: cl.scheme,
		Metrics: metricsserver.Options{
			BindAddress:   fmt.Sprintf("127.0.0.1:%d", metricsPort),
			SecureServing: true,
			TLSOpts:       []func(*tls.Config){func(c *tls.Config) { c.GetCertificate = metricsCert.GetCertificate }},
		},
		HealthProbeBindAddress: fmt.Sprintf("127.0.0.1:%d", probePort),
		WebhookServer: certs.NewServer(webhook.NewServer(webhook.Options{
			Host: cl.wio.LocalServingHost, Port: cl.wio.LocalServingPort, CertDir: certDir,
		}), certDir),
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mgr.Add(metricsCert)).To(Succeed())
	o := selfOptions(certDir)
	o.MetricsServiceName = metricsService
	o.CertValidity, o.RenewBefore, o.CheckInterval = certValidity, renewBefore, time.Second
	ready, err := certs.Setup(ctx, mgr, o)
	g.Expect(err).NotTo(HaveOccurred())
	serveWebhooks(t, mgr, ready, probePort)

	ca := eventuallySeparateKeys(g, c)
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(ca)).To(BeTrue())
	webhookAddr := net.JoinHostPort(cl.wio.LocalServingHost, strconv.Itoa(cl.wio.LocalServingPort))
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", metricsPort)

	// The metrics server serves the Secret's certificate once the manager
	// wrote it (no self-signed stand-in), verified for the metrics Service.
	g.Eventually(func() error {
		_, err := handshake(metricsAddr, metricsServerName, pool)
		return err
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	// The certificates served, by fingerprint, with their NotAfter.
	webhookCerts, metricsCerts := map[string]time.Time{}, map[string]time.Time{}
	var admissions, failures int
	deadline := time.Now().Add(90 * time.Second)
	// The pace of the writes: about 20 rounds a second.
	pace := time.NewTicker(50 * time.Millisecond)
	defer pace.Stop()
	for i := 0; len(webhookCerts) < 4 || len(metricsCerts) < 4; i++ {
		g.Expect(time.Now()).To(BeTemporally("<", deadline),
			"certificates served: webhook %v, metrics %v", webhookCerts, metricsCerts)
		// A new connection each time, verified as a client holding the CA
		// does: the API server (for the webhook Service's names; the
		// envtest URL says localhost) and a scraper (the metrics Service).
		for addr, served := range map[string]map[string]time.Time{webhookAddr: webhookCerts, metricsAddr: metricsCerts} {
			name := "webhook-service." + namespace + ".svc"
			if addr == metricsAddr {
				name = metricsServerName
			}
			cert, err := handshake(addr, name, pool)
			g.Expect(err).NotTo(HaveOccurred(), "handshake %d with %s", i, addr)
			_, err = handshake(addr, "localhost", pool)
			g.Expect(err).NotTo(HaveOccurred(), "handshake %d with %s as localhost", i, addr)
			// By fingerprint, which no two certificates share.
			served[fmt.Sprintf("%x", sha256.Sum256(cert.Raw))] = cert.NotAfter
		}
		// Admission through the API server: a valid Application (dry run:
		// nothing is stored) passes both webhooks, an invalid one is denied
		// by the validating webhook.
		for _, app := range []*sunappsv1.Application{application("good", "a"), application("bad", "b")} {
			admissions++
			err := c.Create(ctx, app, client.DryRunAll)
			switch {
			case app.Name == "good" && err == nil:
			case app.Name == "bad" && err != nil &&
				(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) &&
				containsDenial(err.Error()):
			default:
				failures++
				t.Errorf("admission %d of %s: %v", admissions, app.Name, err)
			}
		}
		<-pace.C
	}
	// The CA stays (only the serving certificate rotates), apart from the
	// serving Secret, and is the one injected and published.
	g.Expect(expectSeparateKeys(g, c)).To(Equal(ca))
	g.Expect(failures).To(BeZero(), "failed admissions out of %d", admissions)
	notAfters := map[time.Time]bool{}
	for _, n := range webhookCerts {
		notAfters[n] = true
	}
	g.Expect(len(notAfters)).To(BeNumerically(">=", 4), "NotAfter moves with each certificate")
	t.Logf("FIGURES: %d admissions, %d failed; %d webhook and %d metrics certificates served in turn",
		admissions, failures, len(webhookCerts), len(metricsCerts))
}

// handshake opens a TLS connection to addr verifying its certificate for
// serverName against pool, and returns the certificate.
func handshake(addr, serverName string, pool *x509.CertPool) (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{
		ServerName: serverName, RootCAs: pool, MinVersion: tls.VersionTLS12,
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// application is an Application whose Pod template carries app=label under
// the selector app=a: valid with "a", denied by the webhook otherwise.
func application(name, label string) *sunappsv1.Application {
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: sunappsv1.ApplicationSpec{Deployment: sunappsv1.DeploymentTemplate{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": label}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		}},
	}
}

// containsDenial tells whether msg is the validating webhook's own denial.
func containsDenial(msg string) bool {
	return !strings.Contains(msg, "x509") &&
		strings.Contains(msg, `admission webhook "vapplication-v1.sunstrider.cn" denied the request`)
}

// TestUpgradeMovesTheCAOutOfTheServingSecret is the upgrade from a version
// that kept the CA and its key in the serving Secret (cert-controller),
// whose certificate did not cover the metrics Service either, after the
// manifests of this one are applied (the empty CA Secret and ConfigMap,
// the narrowed Role): the new manager adopts that CA, already injected, so
// that no caBundle changes and webhooks are trusted throughout; it moves
// the CA key into the CA Secret, removes it from the serving Secret,
// re-issues the serving certificate from the same CA with the metrics
// Service's names, and publishes the CA.
func TestUpgradeMovesTheCAOutOfTheServingSecret(t *testing.T) {
	// Each test runs its own control plane: they wait on it side by side.
	t.Parallel()
	g := NewWithT(t)
	cl := startCluster(t)
	c := cl.client
	ctx := context.Background()
	operator := cl.installShipped(t)

	// What the previous version left: a CA and a certificate for the
	// webhook Service (and localhost) only, far from renewal, in the
	// serving Secret, and the CA injected.
	caCert, caKey, crt, key := legacyCertificates(t, []string{
		"webhook-service." + namespace + ".svc", "webhook-service." + namespace + ".svc.cluster.local", "localhost",
	})
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret)).To(Succeed())
	secret.Data = map[string][]byte{"ca.crt": caCert, "ca.key": caKey, "tls.crt": crt, "tls.key": key}
	g.Expect(c.Update(ctx, secret)).To(Succeed())
	injectAsAdmin(g, c, caCert)
	injected := resourceVersions(g, c)

	certDir := filepath.Join(t.TempDir(), "certs")
	probePort := freePort(t)
	mgr := cl.newManager(t, operator, certDir, probePort)
	o := selfOptions(certDir)
	o.MetricsServiceName = metricsService
	ready, err := certs.Setup(ctx, mgr, o)
	g.Expect(err).NotTo(HaveOccurred())
	serveWebhooks(t, mgr, ready, probePort)

	g.Expect(eventuallySeparateKeys(g, c)).To(Equal(caCert), "the CA stays")
	g.Expect(resourceVersions(g, c)).To(Equal(injected), "the manager wrote no webhook configuration")
	caSecret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: caSecretName}, caSecret)).To(Succeed())
	g.Expect(caSecret.Data["ca.key"]).To(Equal(caKey), "the CA key moved")
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret)).To(Succeed())
	g.Expect(secret.Data["tls.crt"]).NotTo(Equal(crt), "the serving certificate is re-issued")
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(caCert)).To(BeTrue())
	block, _ := pem.Decode(secret.Data["tls.crt"])
	g.Expect(block).NotTo(BeNil())
	issued, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range []string{metricsServerName, "webhook-service." + namespace + ".svc", "localhost"} {
		_, err := issued.Verify(x509.VerifyOptions{DNSName: name, Roots: pool})
		g.Expect(err).NotTo(HaveOccurred(), "valid for %s", name)
	}
	// Webhooks answer with it, trusted through the CA injected before.
	err = c.Create(ctx, application("bad", "b"), client.DryRunAll)
	g.Expect(err).To(HaveOccurred())
	g.Expect(containsDenial(err.Error())).To(BeTrue(), "%v", err)
}

// injectAsAdmin writes ca into every caBundle of the webhook
// configurations and the Drink CRD, as the previous version did.
func injectAsAdmin(g Gomega, c client.Client, ca []byte) {
	ctx := context.Background()
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: mutatingName}, mutating)).To(Succeed())
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig.CABundle = ca
	}
	g.Expect(c.Update(ctx, mutating)).To(Succeed())
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: validatingName}, validating)).To(Succeed())
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig.CABundle = ca
	}
	g.Expect(c.Update(ctx, validating)).To(Succeed())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: drinkCRD}, crd)).To(Succeed())
	crd.Spec.Conversion.Webhook.ClientConfig.CABundle = ca
	g.Expect(c.Update(ctx, crd)).To(Succeed())
}

// resourceVersions are those of the webhook configurations (not the
// CRD's, which its status moves too).
func resourceVersions(g Gomega, c client.Client) []string {
	ctx := context.Background()
	out := make([]string, 0, 2)
	for _, obj := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: mutatingName}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: validatingName}},
	} {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		out = append(out, obj.GetResourceVersion())
	}
	return out
}
