package certs

import (
	"crypto/tls"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestEnsureLocalCertReusesUntilRenewalOrNewHosts(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join(t.TempDir(), "certs")
	now := time.Now()
	hosts := []string{"localhost", "127.0.0.1"}

	first, err := ensureLocalCert(dir, hosts, now)
	g.Expect(err).NotTo(HaveOccurred())
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, certName), filepath.Join(dir, keyName))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pair.Leaf.DNSNames).To(ConsistOf("localhost"))
	g.Expect(pair.Leaf.IPAddresses).To(HaveLen(1))
	g.Expect(validLocalCert(dir, first, hosts, now)).To(BeTrue())
	info, err := os.Stat(filepath.Join(dir, caName))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))

	for _, tc := range []struct {
		name  string
		hosts []string
		now   time.Time
		same  bool
	}{
		{"a restart keeps it", hosts, now.Add(time.Hour), true},
		{"a host it does not cover renews it", append(hosts, "operator.example"), now, false},
		{"expiry within the renewal window renews it", hosts, now.Add(localValidity - localRenewBefore + time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before, err := os.ReadFile(filepath.Join(dir, caName))
			g.Expect(err).NotTo(HaveOccurred())
			ca, err := ensureLocalCert(dir, tc.hosts, tc.now)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ca).NotTo(BeEmpty())
			if tc.same {
				g.Expect(ca).To(Equal(before))
			} else {
				g.Expect(ca).NotTo(Equal(before))
				g.Expect(validLocalCert(dir, ca, tc.hosts, tc.now)).To(BeTrue())
			}
		})
	}
}

func TestSetCABundle(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n")
	bundle := base64.StdEncoding.EncodeToString(ca)
	crd := func(strategy, caBundle string) *unstructured.Unstructured {
		u := object(crdGVK, "drinks.example.com")
		u.Object["spec"] = map[string]any{"conversion": map[string]any{
			"strategy": strategy,
			"webhook":  map[string]any{"clientConfig": map[string]any{"url": "https://localhost:9443/convert", "caBundle": caBundle}},
		}}
		return u
	}
	hooks := func(caBundles ...string) *unstructured.Unstructured {
		u := object(validatingGVK, "validating")
		list := make([]any, 0, len(caBundles))
		for _, b := range caBundles {
			list = append(list, map[string]any{"name": "h", "clientConfig": map[string]any{"caBundle": b}})
		}
		u.Object["webhooks"] = list
		return u
	}
	for _, tc := range []struct {
		name    string
		obj     *unstructured.Unstructured
		changed bool
		wantErr bool
	}{
		{"CRD without the CA", crd("Webhook", ""), true, false},
		{"CRD with the CA", crd("Webhook", bundle), false, false},
		{"CRD converting without webhook", crd("None", ""), false, true},
		{"webhooks, one without the CA", hooks(bundle, "b2xk"), true, false},
		{"webhooks with the CA", hooks(bundle, bundle), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			changed, err := setCABundle(tc.obj, ca)
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(changed).To(Equal(tc.changed))
			again, err := setCABundle(tc.obj, ca)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again).To(BeFalse(), "the CA is in place after the first call")
		})
	}
}
