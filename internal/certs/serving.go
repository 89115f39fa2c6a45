package certs

import (
	"context"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// writer keeps CertDir equal to the serving certificate in the serving
// Secret, through a watch on that one Secret, on every replica.
type writer struct {
	watches watches
	secret  types.NamespacedName
	dir     string
}

// NeedLeaderElection is false: every replica serves webhooks.
func (w *writer) NeedLeaderElection() bool { return false }

// Start watches the Secret and writes its certificate until ctx ends.
func (w *writer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("cert-writer")
	ctx = ctrl.LoggerInto(ctx, log)
	watched := &corev1.Secret{}
	watched.Namespace, watched.Name = w.secret.Namespace, w.secret.Name
	if err := w.watches.watch(ctx, watched, func(obj any) {
		secret, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		if err := writeCert(w.dir, secret.Data[certName], secret.Data[keyName]); err != nil {
			log.Error(err, "Writing the serving certificate failed", "dir", w.dir)
		}
	}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// writeCert writes cert and key into dir, each atomically, when both are
// present and differ from what is there.
func writeCert(dir string, cert, key []byte) error {
	if len(cert) == 0 || len(key) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{keyName: key, certName: cert} {
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
			continue
		}
		tmp, err := os.CreateTemp(dir, "."+name+"-*")
		if err != nil {
			return err
		}
		if _, err := tmp.Write(data); err != nil {
			_ = tmp.Close()
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return err
		}
	}
	return nil
}

// NewServer wraps a webhook server so that it starts only once its
// certificate is in CertDir: until then it is not started, and a readiness
// check on StartedChecker fails.
func NewServer(inner webhook.Server, certDir string) webhook.Server {
	return &server{Server: inner, certFile: filepath.Join(certDir, certName), keyFile: filepath.Join(certDir, keyName)}
}

type server struct {
	webhook.Server
	certFile, keyFile string
}

func (s *server) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-server")
	ticker := time.NewTicker(250 * time.Millisecond)
	defer ticker.Stop()
	for !exists(s.certFile) || !exists(s.keyFile) {
		log.V(1).Info("Waiting for the serving certificate", "file", s.certFile)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
	return s.Server.Start(ctx)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
