package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// FileCertificate gives a TLS server (the metrics server) the key pair of a
// directory that may fill only after the server starts: in
// --cert-mode=self the manager writes the serving certificate there itself
// once it has read (or made) it. Until the files are there, handshakes fail
// (rather than falling back to a certificate nobody can verify, as
// controller-runtime's metrics server does when its CertDir is empty at
// start); afterwards every change of the files is served
// (controller-runtime's certwatcher).
type FileCertificate struct {
	certFile, keyFile string
	watcher           atomic.Pointer[certwatcher.CertWatcher]
}

// NewFileCertificate serves certName and keyName of dir once Start finds
// them there.
func NewFileCertificate(dir, certName, keyName string) *FileCertificate {
	return &FileCertificate{certFile: filepath.Join(dir, certName), keyFile: filepath.Join(dir, keyName)}
}

// NeedLeaderElection is false: every replica serves metrics.
func (c *FileCertificate) NeedLeaderElection() bool { return false }

// Start waits for the key pair, then follows its changes until ctx ends.
func (c *FileCertificate) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("metrics-certificate")
	ticker := time.NewTicker(250 * time.Millisecond)
	defer ticker.Stop()
	for {
		if exists(c.certFile) && exists(c.keyFile) {
			w, err := certwatcher.New(c.certFile, c.keyFile)
			if err == nil {
				c.watcher.Store(w)
				log.Info("Serving metrics with the certificate", "file", c.certFile)
				return w.Start(ctx)
			}
			// Written but not yet matching (the key is renamed into place
			// before or after the certificate): try again.
			log.V(1).Info("Reading the metrics certificate failed", "file", c.certFile, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// GetCertificate is a tls.Config's GetCertificate.
func (c *FileCertificate) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	w := c.watcher.Load()
	if w == nil {
		return nil, fmt.Errorf("%w: %s", errNoCertificateYet, c.certFile)
	}
	return w.GetCertificate(hello)
}

var errNoCertificateYet = errors.New("no serving certificate yet")
