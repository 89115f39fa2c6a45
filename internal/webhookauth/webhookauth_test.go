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

package webhookauth

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The admission paths need a caller whose certificate the handshake
// verified; the conversion path, which kube-apiserver calls without one,
// does not.
func TestAdmissionPathsNeedAVerifiedClient(t *testing.T) {
	s := Server{Server: webhook.NewServer(webhook.Options{})}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, path := range []string{"/validate-apps-sunstrider-cn-v1-application", "/mutate-apps-sunstrider-cn-v1-application",
		ConversionPath} {
		s.Register(path, ok)
	}
	verified := &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{}}}}
	tests := []struct {
		name string
		path string
		tls  *tls.ConnectionState
		want int
	}{
		{"validating, verified", "/validate-apps-sunstrider-cn-v1-application", verified, http.StatusOK},
		{"mutating, verified", "/mutate-apps-sunstrider-cn-v1-application", verified, http.StatusOK},
		{"validating, no certificate", "/validate-apps-sunstrider-cn-v1-application", &tls.ConnectionState{},
			http.StatusUnauthorized},
		{"mutating, no TLS", "/mutate-apps-sunstrider-cn-v1-application", nil, http.StatusUnauthorized},
		{"conversion, no certificate", ConversionPath, &tls.ConnectionState{}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tt.path, nil)
			req.TLS = tt.tls
			rec := httptest.NewRecorder()
			s.WebhookMux().ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("%s: got %d, want %d (%s)", tt.path, rec.Code, tt.want, rec.Body.String())
			}
		})
	}
}
