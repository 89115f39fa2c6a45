//go:build e2e

package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWebhooksServeOnlyTheAPIServer: the cluster's API server presents a
// client certificate to admission webhooks (its
// --admission-control-config-file, hack/dev-cluster.sh's
// WEBHOOK_CLIENT_CERT) and the operator requires it
// (--webhook-client-ca-path): a forged AdmissionReview posted straight to
// the webhook port, as any Pod could, gets 401; the API server's own call
// is served, as the webhook's refusal of an invalid Application shows.
// Every admission of the suite goes the same way.
func TestWebhooksServeOnlyTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	secret := &corev1.Secret{}
	g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: operatorNamespace,
		Name: "sunstrider-operator-webhook-server-cert"}, secret)).To(Succeed())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue(), "the webhook's CA")
	https := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}
	review := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"forged",` +
		`"kind":{"group":"apps.sunstrider.cn","version":"v1","kind":"Application"},` +
		`"resource":{"group":"apps.sunstrider.cn","version":"v1","resource":"applications"},` +
		`"namespace":"default","name":"web","operation":"CREATE","userInfo":{"username":"alice"},` +
		`"object":{"apiVersion":"apps.sunstrider.cn/v1","kind":"Application",` +
		`"metadata":{"name":"web","namespace":"default"},"spec":{}}}}`)
	resp, err := https.Post(fmt.Sprintf("https://localhost:%d/validate-apps-sunstrider-cn-v1-application", webhookPort),
		"application/json", bytes.NewReader(review))
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), "a forged AdmissionReview: %s", body)
	g.Expect(string(body)).To(ContainSubstring("needs the client certificate of the API server"))

	// Through the API server: the webhook answers (a refusal naming the
	// field), not a failed call.
	out, err := sh(t, []byte(`apiVersion: apps.sunstrider.cn/v1
kind: Application
metadata: {name: webhook-client-probe, namespace: default}
spec:
  deployment:
    selector: {matchLabels: {app: one}}
    template:
      metadata: {labels: {app: other}}
      spec: {containers: [{name: c, image: example.com/app:1}]}
`), kubectl, "create", "--dry-run=server", "-f", "-")
	g.Expect(err).To(HaveOccurred(), "an Application whose selector does not match its template:\n%s", out)
	g.Expect(out).To(ContainSubstring("spec.deployment.template.metadata.labels"), "the webhook's own refusal")
	g.Expect(out).NotTo(ContainSubstring("failed calling webhook"))
}
