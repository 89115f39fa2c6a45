package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// The key of the CA Secret holding the CA key (ca.crt holds the CA, as in
// the serving Secret and the ConfigMap: local.go's caName).
const (
	caKeyName = "ca.key"
)

// authority is the CA the leader signs serving certificates with.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// parseAuthority reads a CA from its PEM certificate and key (any key type
// crypto/tls reads: the RSA PKCS#1 keys cert-controller wrote, and the ECDSA
// keys made here).
func parseAuthority(certPEM, keyPEM []byte) (*authority, error) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return nil, errors.New("no CA certificate or key")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the CA: %w", err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("the CA key cannot sign")
	}
	if !pair.Leaf.IsCA {
		return nil, errors.New("the CA certificate is not a CA")
	}
	return &authority{cert: pair.Leaf, key: signer, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// validUntil tells whether the CA is valid from now until at least at.
func (a *authority) validUntil(now, at time.Time) bool {
	return !now.Before(a.cert.NotBefore) && at.Before(a.cert.NotAfter)
}

// newAuthority makes a self-signed CA valid from an hour before now for
// validity.
func newAuthority(now time.Time, validity time.Duration) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "sunstrider-operator-ca", Organization: []string{"sunstrider-operator"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating the CA certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return parseAuthority(pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}), keyPEM)
}

// issue makes a serving certificate signed by a for dnsNames (the first is
// its common name), valid from an hour before now for validity, and its key.
func (a *authority) issue(dnsNames []string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	notAfter := now.Add(validity)
	// A certificate outliving its CA would fail before its renewal.
	if notAfter.After(a.cert.NotAfter) {
		notAfter = a.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     dnsNames,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the serving certificate: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}), keyPEM, nil
}

// validServing tells whether certPEM and keyPEM are a pair that a
// verifies for a server of every one of dnsNames from now until at least at.
func (a *authority) validServing(certPEM, keyPEM []byte, dnsNames []string, now, at time.Time) bool {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	roots.AddCert(a.cert)
	for _, t := range []time.Time{now, at} {
		for _, name := range dnsNames {
			if _, err := pair.Leaf.Verify(x509.VerifyOptions{
				DNSName: name, Roots: roots, CurrentTime: t, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}); err != nil {
				return false
			}
		}
	}
	return true
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// serialNumber is a random 128-bit serial number, unique in practice.
func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}
