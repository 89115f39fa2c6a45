/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package webhooktest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// apiServerClient is the client certificate (and its CA) the suite's
// kube-apiserver presents to the webhooks, as its admission configuration
// says (--admission-control-config-file): the webhook server requires it
// on its admission paths (internal/webhookauth), so that every admission
// test of the suite goes through an authenticated call.
type apiServerClient struct {
	caPEM   []byte
	cert    tls.Certificate
	dir     string
	caPath  string
	cfgPath string
}

// newAPIServerClient makes a CA, a client certificate it signs, and the
// files kube-apiserver reads: an AdmissionConfiguration whose webhook
// plugins present the certificate to every webhook ('*').
func newAPIServerClient() (*apiServerClient, error) {
	dir, err := os.MkdirTemp("", "webhook-client-")
	if err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-client-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := signedClient(ca, caKey, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	c := &apiServerClient{dir: dir, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	if c.cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, err
	}
	c.caPath = filepath.Join(dir, "client-ca.crt")
	kubeconfig := filepath.Join(dir, "webhook-kubeconfig")
	c.cfgPath = filepath.Join(dir, "admission.yaml")
	for path, data := range map[string]string{
		c.caPath: string(c.caPEM),
		kubeconfig: fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: '*'
  user:
    client-certificate-data: %s
    client-key-data: %s
`, b64(certPEM), b64(keyPEM)),
		c.cfgPath: fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
`, kubeconfig),
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// configure has env's kube-apiserver read the admission configuration.
func (c *apiServerClient) configure(env *envtest.Environment) {
	env.ControlPlane.GetAPIServer().Configure().Append("admission-control-config-file", c.cfgPath)
}

// signedClient returns a client certificate for cn that ca signs, and its
// key, PEM-encoded.
func signedClient(ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string) ([]byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// TestWebhookAdmitsOnlyTheAPIServer posts an AdmissionReview straight to
// the Application's validating webhook, as any Pod that reaches the port
// could: without a client certificate it is refused (401) before the
// access check runs, with a certificate of another CA the handshake fails,
// and with the API server's certificate it is answered. Every other test
// of the suite admits its objects through the API server, which presents
// that certificate (its --admission-control-config-file).
func TestWebhookAdmitsOnlyTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("forged"),
			Kind:      metav1.GroupVersionKind{Group: "apps.sunstrider.cn", Version: "v1", Kind: "Application"},
			Resource:  metav1.GroupVersionResource{Group: "apps.sunstrider.cn", Version: "v1", Resource: "applications"},
			Namespace: "default", Name: "web", Operation: admissionv1.Create,
			Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps.sunstrider.cn/v1","kind":"Application",` +
				`"metadata":{"name":"web","namespace":"default"},"spec":{}}`)},
		},
	}
	review.Request.UserInfo.Username = "alice"
	body, err := json.Marshal(review)
	g.Expect(err).NotTo(HaveOccurred())
	url := fmt.Sprintf("https://%s/validate-apps-sunstrider-cn-v1-application", webhookAddress)
	post := func(certs ...tls.Certificate) (*http.Response, error) {
		roots := x509.NewCertPool()
		g.Expect(roots.AppendCertsFromPEM(webhookServingCA)).To(BeTrue())
		// Sent whether or not the server names its CA as acceptable (Go's
		// client otherwise sends none of another CA's).
		present := func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if len(certs) == 0 {
				return &tls.Certificate{}, nil
			}
			return &certs[0], nil
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, GetClientCertificate: present, MinVersion: tls.VersionTLS12}}}
		return c.Post(url, "application/json", bytes.NewReader(body))
	}

	resp, err := post()
	g.Expect(err).NotTo(HaveOccurred())
	text, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), "no client certificate: %s", text)
	g.Expect(string(text)).To(ContainSubstring("needs the client certificate of the API server"))

	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	otherCA := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	certPEM, keyPEM, err := signedClient(otherCA, otherKey, "kube-apiserver")
	g.Expect(err).NotTo(HaveOccurred())
	other, err := tls.X509KeyPair(certPEM, keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err = post(other)
	if err == nil {
		_ = resp.Body.Close()
	}
	g.Expect(err).To(HaveOccurred(), "a certificate of another CA ends the handshake")

	resp, err = post(apiServer.cert)
	g.Expect(err).NotTo(HaveOccurred())
	text, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "the API server's certificate: %s", text)
	answer := admissionv1.AdmissionReview{}
	g.Expect(json.Unmarshal(text, &answer)).To(Succeed())
	g.Expect(answer.Response).NotTo(BeNil())
	g.Expect(answer.Response.UID).To(Equal(types.UID("forged")), "answered")
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }
