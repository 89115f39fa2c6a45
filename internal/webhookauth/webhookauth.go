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

// Package webhookauth has the webhook server authenticate its callers: an
// admission request is served only when it comes with a client
// certificate that a CA the operator is given (--webhook-client-ca-path)
// verifies, the certificate kube-apiserver presents when its admission
// configuration (--admission-control-config-file, WebhookAdmission's
// kubeConfigFile) gives it one. Without it, any Pod that reaches the
// webhook port can post a forged AdmissionReview and learn from the answer
// whether a user may create Deployments in a namespace: the access check
// becomes an oracle, and a driver of uncached SubjectAccessReviews.
//
// Hand-written because controller-runtime's webhook.Options.ClientCAName
// requires a client certificate of every caller, on every path: kube-apiserver
// calls CRD conversion webhooks (the Drink's /convert) with no client
// credentials (apiextensions-apiserver resolves their authentication with
// an empty kubeconfig), so that would stop every conversion. Here the TLS
// handshake verifies a certificate when one is given, and the admission
// paths alone refuse a request without a verified one. A conversion reveals
// nothing about anyone's rights.
package webhookauth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// ConversionPath is the path of the CRD conversion webhook, which
// kube-apiserver calls without a client certificate.
const ConversionPath = "/convert"

// LoadClientCAs reads the PEM bundle at path: the CAs whose certificates
// the webhook server accepts from callers.
func LoadClientCAs(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the webhook client CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("the webhook client CA bundle %s holds no PEM certificate", path)
	}
	return pool, nil
}

// TLSOption has the webhook server ask callers for a certificate and
// verify it against cas when one is given (tls.VerifyClientCertIfGiven): a
// certificate that does not verify ends the handshake; none is left to
// the paths (RequireClient).
func TLSOption(cas *x509.CertPool) func(*tls.Config) {
	return func(c *tls.Config) {
		c.ClientAuth = tls.VerifyClientCertIfGiven
		c.ClientCAs = cas
	}
}

// RequireClient serves next only to a caller whose certificate the TLS
// handshake verified; any other gets 401 Unauthorized, saying why.
func RequireClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := verified(r); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// verified returns why r's caller is not authenticated, or nil.
func verified(r *http.Request) error {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return errors.New("an admission request needs the client certificate of the API server " +
			"(--webhook-client-ca-path verifies it; docs/security.md)")
	}
	return nil
}

// Server is a webhook server whose admission paths need an authenticated
// caller (RequireClient); the conversion path does not.
type Server struct {
	webhook.Server
}

// Register registers hook at path, behind RequireClient unless path is
// the conversion webhook's.
func (s Server) Register(path string, hook http.Handler) {
	if !strings.HasPrefix(path, ConversionPath) {
		hook = RequireClient(hook)
	}
	s.Server.Register(path, hook)
}
