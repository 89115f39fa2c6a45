package certs

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"
)

// NotAfter returns when the first certificate of the PEM file at path, the
// one a TLS server serves from it, expires: the webhook server's, for the
// sunstrider_operator_webhook_certificate_expiry_timestamp_seconds gauge
// (internal/metrics), read at each scrape so that a rotation shows at once.
func NotAfter(path string) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != pemCertificate {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return time.Time{}, fmt.Errorf("parsing the certificate in %s: %w", path, err)
		}
		return cert.NotAfter, nil
	}
	return time.Time{}, errors.New("no certificate in " + path)
}

// pemCertificate is the PEM block type of a certificate.
const pemCertificate = "CERTIFICATE"
