package certs

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// rsaAuthorityPEM is a CA as cert-controller made it: an RSA key in
// PKCS#1.
func rsaAuthorityPEM(t *testing.T, isCA bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: isCA,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func TestParseAuthority(t *testing.T) {
	now := time.Now()
	ec, err := newAuthority(now, time.Hour)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	other, err := newAuthority(now, time.Hour)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	rsaCert, rsaKey := rsaAuthorityPEM(t, true)
	leafCert, leafKey := rsaAuthorityPEM(t, false)
	for _, tc := range []struct {
		name      string
		cert, key []byte
		wantErr   string
	}{
		{"a CA made here", ec.certPEM, ec.keyPEM, ""},
		{"a CA of an earlier version (RSA, PKCS#1)", rsaCert, rsaKey, ""},
		{"nothing (an empty Secret)", nil, nil, "no CA certificate or key"},
		{"no key", ec.certPEM, nil, "no CA certificate or key"},
		{"another CA's key", ec.certPEM, other.keyPEM, "reading the CA"},
		{"not PEM", []byte("ca"), []byte("key"), "reading the CA"},
		{"not a CA", leafCert, leafKey, "not a CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ca, err := parseAuthority(tc.cert, tc.key)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ca.certPEM).To(Equal(tc.cert))
			g.Expect(ca.keyPEM).To(Equal(tc.key))
			// It signs certificates that verify against it.
			cert, key, err := ca.issue([]string{"svc.ns.svc"}, now, time.Hour)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ca.validServing(cert, key, []string{"svc.ns.svc"}, now, now)).To(BeTrue())
		})
	}
}

func TestValidServing(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	ca, err := newAuthority(now, 10*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	other, err := newAuthority(now, 10*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	names := []string{"metrics.ns.svc", "webhook.ns.svc", "localhost"}
	cert, key, err := ca.issue(names, now, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	_, otherKey, err := ca.issue(names, now, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	foreign, foreignKey, err := other.issue(names, now, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	long, longKey, err := ca.issue(names, now, 100*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())

	for _, tc := range []struct {
		name      string
		cert, key []byte
		names     []string
		at        time.Time
		want      bool
	}{
		{"valid for every name beyond the window", cert, key, names, now.Add(time.Hour), true},
		{"expiring within the window", cert, key, names, now.Add(3 * time.Hour), false},
		{"not valid for a name (one a version before did not cover)", cert, key, append(names, "new.ns.svc"), now, false},
		{"another certificate's key", cert, otherKey, names, now, false},
		{"signed by another CA", foreign, foreignKey, names, now, false},
		{"none (an empty Secret)", nil, nil, names, now, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(ca.validServing(tc.cert, tc.key, tc.names, now, tc.at)).To(Equal(tc.want))
		})
	}
	// A certificate outliving its CA is cut to the CA's end.
	pair, err := tls.X509KeyPair(long, longKey)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pair.Leaf.NotAfter).To(Equal(ca.cert.NotAfter))
	g.Expect(ca.validUntil(now, now.Add(9*time.Hour))).To(BeTrue())
	g.Expect(ca.validUntil(now, now.Add(11*time.Hour))).To(BeFalse(), "expiring within the window")
}

func TestRotationOptions(t *testing.T) {
	g := NewWithT(t)
	o, err := Options{CASecretName: "ca"}.withRotationDefaults()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]time.Duration{o.CertValidity, o.CAValidity, o.RenewBefore, o.CheckInterval}).To(Equal([]time.Duration{
		365 * 24 * time.Hour, 10 * 365 * 24 * time.Hour, 90 * 24 * time.Hour, 12 * time.Hour,
	}))
	for _, tc := range []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"certificate renewed as soon as issued", Options{CASecretName: "ca", CertValidity: time.Hour, RenewBefore: time.Hour},
			"certs.Options.CertValidity (1h0m0s) must exceed RenewBefore (1h0m0s)"},
		{"CA renewed as soon as issued", Options{CASecretName: "ca", CertValidity: 2 * time.Hour, CAValidity: time.Hour,
			RenewBefore: time.Hour}, "certs.Options.CAValidity (1h0m0s) must exceed RenewBefore (1h0m0s)"},
		{"no CA Secret", Options{}, "certs.Options.CASecretName is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.withRotationDefaults()
			NewWithT(t).Expect(err).To(MatchError(tc.wantErr))
		})
	}
}

func TestCheckCertificates(t *testing.T) {
	ca, err := newAuthority(time.Now(), time.Hour)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"a CA", ca.certPEM, true},
		{"two", append(append([]byte{}, ca.certPEM...), ca.certPEM...), true},
		{"a key with it", append(append([]byte{}, ca.certPEM...), ca.keyPEM...), false},
		{"empty", nil, false},
		{"not PEM", []byte("ca"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCertificates(tc.data)
			if tc.ok {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
			} else {
				NewWithT(t).Expect(err).To(HaveOccurred())
			}
		})
	}
}
