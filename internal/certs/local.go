package certs

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"sunstrider.cn/operator/internal/apply"
)

// Local certificates are for one operator process running outside the
// cluster next to a local API server (`make run`): no namespace, Secret or
// leader is involved. The CA and serving certificate live in CertDir only
// (ca.crt, tls.crt, tls.key; the CA key is never written), are reused across
// restarts while valid, and are made anew when they expire within
// localRenewBefore or do not cover the host names. There is no background
// rotation: a local run lasting localValidity is not expected.
const (
	caName           = "ca.crt"
	localValidity    = 365 * 24 * time.Hour
	localRenewBefore = 30 * 24 * time.Hour
)

var (
	crdGVK        = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	mutatingGVK   = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}
	validatingGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
)

// LocalHosts are the names a local certificate is valid for besides
// Options.ExtraDNSNames: what a URL clientConfig of a local API server uses.
var LocalHosts = []string{"localhost", "127.0.0.1", "::1"}

// SetupLocal makes (or reuses) a CA and serving certificate in o.CertDir,
// valid for LocalHosts and o.ExtraDNSNames, and adds to mgr a runnable that
// injects the CA into o.ConversionCRDs and the webhook configurations that
// exist (o.Namespace, o.SecretName and o.ServiceName are not used). It
// returns a readiness check passing once the CA is injected, and the names
// of the webhook configurations missing from the cluster: their webhooks are
// served but nothing calls them.
func SetupLocal(ctx context.Context, mgr ctrl.Manager, o Options) (ready healthz.Checker, missing []string, err error) {
	hosts := append(append([]string{}, LocalHosts...), o.ExtraDNSNames...)
	ca, err := ensureLocalCert(o.CertDir, hosts, time.Now())
	if err != nil {
		return nil, nil, fmt.Errorf("making a local webhook certificate in %s: %w", o.CertDir, err)
	}
	targets := make([]*unstructured.Unstructured, 0, 2+len(o.ConversionCRDs))
	for _, crd := range o.ConversionCRDs {
		targets = append(targets, object(crdGVK, crd))
	}
	for gvk, name := range map[schema.GroupVersionKind]string{
		mutatingGVK:   o.MutatingWebhookConfiguration,
		validatingGVK: o.ValidatingWebhookConfiguration,
	} {
		if name == "" {
			continue
		}
		err := mgr.GetAPIReader().Get(ctx, client.ObjectKey{Name: name}, object(gvk, name))
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return nil, nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, name, err)
		default:
			targets = append(targets, object(gvk, name))
		}
	}
	inj := &localInjector{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), ca: ca, targets: targets, done: make(chan struct{})}
	if err := mgr.Add(inj); err != nil {
		return nil, nil, fmt.Errorf("adding the CA injector: %w", err)
	}
	return func(*http.Request) error {
		select {
		case <-inj.done:
			return nil
		default:
			return errors.New("the CA is not injected into the conversion CRDs and webhook configurations yet")
		}
	}, missing, nil
}

func object(gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	return u
}

// ensureLocalCert returns the CA certificate (PEM) of a serving certificate
// in dir valid for hosts until at least now+localRenewBefore, making both
// when there is none.
func ensureLocalCert(dir string, hosts []string, now time.Time) ([]byte, error) {
	if ca, err := os.ReadFile(filepath.Join(dir, caName)); err == nil && validLocalCert(dir, ca, hosts, now.Add(localRenewBefore)) {
		return ca, nil
	}
	ca, cert, key, err := newLocalCert(hosts, now)
	if err != nil {
		return nil, err
	}
	// The CA first: a serving certificate is never there without its CA.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, caName), ca, 0o600); err != nil {
		return nil, err
	}
	if err := writeCert(dir, cert, key); err != nil {
		return nil, err
	}
	return ca, nil
}

// validLocalCert tells whether dir's serving certificate and key match,
// chain to ca and are valid for every host at the time at.
func validLocalCert(dir string, ca []byte, hosts []string, at time.Time) bool {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, certName), filepath.Join(dir, keyName))
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return false
	}
	for _, h := range hosts {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: h, CurrentTime: at}); err != nil {
			return false
		}
	}
	return true
}

// newLocalCert makes a CA and a serving certificate it signs for hosts
// (names or IP addresses), valid from an hour before now for localValidity.
func newLocalCert(hosts []string, now time.Time) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	begin, end := now.Add(-time.Hour), now.Add(localValidity)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sunstrider-operator-local-ca", Organization: []string{"sunstrider-operator"}},
		NotBefore:             begin,
		NotAfter:              end,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    begin,
		NotAfter:     end,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// localInjector writes the local CA into the caBundle of every target's
// webhooks once, retrying until it succeeds, then closes done. Targets that
// are re-created afterwards keep what they are created with: restart the
// operator.
type localInjector struct {
	reader  client.Reader
	writer  client.Writer
	ca      []byte
	targets []*unstructured.Unstructured
	done    chan struct{}
}

// NeedLeaderElection is false: a local operator is one process with its own CA.
func (i *localInjector) NeedLeaderElection() bool { return false }

// Start injects the CA into every target, retrying every second until all
// are done or ctx ends.
func (i *localInjector) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("ca-injector")
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		for _, t := range i.targets {
			if err := injectCA(ctx, i.reader, i.writer, t, i.ca); err != nil {
				log.Error(err, "Injecting the local CA failed, retrying", "kind", t.GetKind(), "name", t.GetName())
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("injecting the local CA: %w", err)
	}
	log.Info("Local CA injected", "objects", len(i.targets))
	close(i.done)
	return nil
}

// injectCA writes ca into target's clientConfig.caBundle fields, unless
// they already hold it or target is being deleted: it reads target by name
// and updates it with the operator's field owner, changing nothing else
// (config/rbac/manager_write_policy.yaml refuses any other change).
func injectCA(ctx context.Context, reader client.Reader, writer client.Writer, target *unstructured.Unstructured, ca []byte) error {
	obj := target.DeepCopy()
	if err := reader.Get(ctx, client.ObjectKeyFromObject(target), obj); err != nil {
		return err
	}
	if obj.GetDeletionTimestamp() != nil {
		return nil
	}
	changed, err := setCABundle(obj, ca)
	if err != nil || !changed {
		return err
	}
	return writer.Update(ctx, obj, client.FieldOwner(apply.FieldOwner))
}

// setCABundle sets every clientConfig.caBundle of a webhook configuration or
// of a CRD's conversion webhook to ca, and tells whether anything changed.
func setCABundle(obj *unstructured.Unstructured, ca []byte) (bool, error) {
	bundle := base64.StdEncoding.EncodeToString(ca)
	set := func(m map[string]any, path ...string) (bool, error) {
		old, _, _ := unstructured.NestedString(m, path...)
		if decoded, err := base64.StdEncoding.DecodeString(old); err == nil && bytes.Equal(decoded, ca) {
			return false, nil
		}
		return true, unstructured.SetNestedField(m, bundle, path...)
	}
	if obj.GroupVersionKind() == crdGVK {
		if strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "conversion", "strategy"); strategy != "Webhook" {
			return false, fmt.Errorf("CRD %s has conversion strategy %q, not Webhook", obj.GetName(), strategy)
		}
		return set(obj.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	}
	hooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil {
		return false, err
	}
	changed := false
	for _, h := range hooks {
		m, ok := h.(map[string]any)
		if !ok {
			continue
		}
		c, err := set(m, "clientConfig", "caBundle")
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	if !changed {
		return false, nil
	}
	return true, unstructured.SetNestedSlice(obj.Object, hooks, "webhooks")
}
