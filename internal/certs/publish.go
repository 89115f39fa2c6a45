package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
)

// publisher keeps ca.crt of a ConfigMap equal to the CA, by server-side
// apply with the operator's field owner: a scraper (a ServiceMonitor's
// tlsConfig.ca.configMap) verifies the metrics server with it, reading no
// Secret. The ConfigMap holds no secret, so anyone may read it.
type publisher struct {
	client          client.Client
	namespace, name string
	// last is the CA last applied: the same CA is not applied again.
	last []byte
}

// publish applies ca unless it is the CA last applied (or there is no
// ConfigMap to apply it to).
func (p *publisher) publish(ctx context.Context, ca []byte) error {
	if p.name == "" || bytes.Equal(p.last, ca) {
		return nil
	}
	cm := corev1ac.ConfigMap(p.name, p.namespace).WithData(map[string]string{caName: string(ca)})
	if err := p.client.Apply(ctx, cm, client.FieldOwner(apply.FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("publishing the CA in ConfigMap %s/%s: %w", p.namespace, p.name, err)
	}
	ctrl.LoggerFrom(ctx).Info("CA published", "configMap", p.name)
	p.last = bytes.Clone(ca)
	return nil
}

// defaultPublishInterval is how often PublishCA reads ca.crt: the kubelet
// refreshes a mounted Secret within about a minute of a change as well.
const defaultPublishInterval = time.Minute

// PublishCA (--cert-mode=external) adds to mgr a runnable that keeps, on
// the leader, o.CAConfigMapName's ca.crt equal to ca.crt of o.CertDir:
// there cert-manager's Secret is mounted, whose ca.crt is the issuer's CA.
// It reads the file every o.CheckInterval (1 minute); while there is no
// such file (OLM mounts none), it publishes nothing. It adds nothing
// without a namespace or ConfigMap name.
func PublishCA(mgr ctrl.Manager, o Options) error {
	if o.Namespace == "" || o.CAConfigMapName == "" {
		return nil
	}
	interval := o.CheckInterval
	if interval == 0 {
		interval = defaultPublishInterval
	}
	return mgr.Add(&filePublisher{
		publisher: publisher{client: mgr.GetClient(), namespace: o.Namespace, name: o.CAConfigMapName},
		path:      filepath.Join(o.CertDir, caName),
		interval:  interval,
	})
}

type filePublisher struct {
	publisher
	path     string
	interval time.Duration
}

// NeedLeaderElection is true: one replica writes the ConfigMap.
func (f *filePublisher) NeedLeaderElection() bool { return true }

// Start publishes the file's CA until ctx ends.
func (f *filePublisher) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("ca-publisher")
	ctx = ctrl.LoggerInto(ctx, log)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		ca, err := os.ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			log.V(1).Info("No CA to publish", "file", f.path)
			return
		}
		if err == nil {
			err = checkCertificates(ca)
		}
		if err == nil {
			err = f.publish(ctx, ca)
		}
		if err != nil {
			log.Error(err, "Publishing the CA failed, retrying", "file", f.path, "after", f.interval)
		}
	}, f.interval)
	return nil
}

// checkCertificates tells whether data is PEM holding certificates only.
func checkCertificates(data []byte) error {
	var n int
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != pemCertificate {
			return fmt.Errorf("a PEM block of type %q, not %s", block.Type, pemCertificate)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("no PEM certificate")
	}
	return nil
}
