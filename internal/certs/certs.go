// Package certs gives the manager serving certificates for its webhooks
// without anyone's intervention, in one of two ways.
//
// Setup (--cert-mode=self, the deployed operator): the leader creates and
// rotates them in a Secret of the operator's namespace and injects the CA
// into the webhook configurations and the CRDs' conversion stanzas
// (github.com/open-policy-agent/cert-controller); every replica writes the
// Secret's certificate to its certificate directory and starts serving
// webhooks only once it is there. Without that Secret (or namespace) Setup
// returns ErrNoSecret and the caller runs without webhooks.
//
// SetupLocal (--cert-mode=local, `make run`): one process outside the
// cluster keeps a CA and certificate for localhost in its certificate
// directory and injects the CA into whatever exists of the same objects; no
// namespace or Secret is needed (local.go).
package certs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"sunstrider.cn/operator/internal/apply"
)

// The certificate Secret lives in the operator's own namespace only; the
// webhook configurations and CRDs are updated to carry the CA bundle.
//
// get, list and watch are generated here; update is not: it is granted by
// config/rbac/ca_injection_role.yaml, a ClusterRole of its own, so that the
// installs where the manager injects no CA (cert-manager, OLM) leave it out
// whole. It names the operator's own objects only (resourceNames: the names
// cmd/main.go passes in Options, which config/default's namePrefix and the
// chart give the deployed objects; internal/rbac's tests check they agree),
// and config/rbac/manager_write_policy.yaml lets it change only their
// caBundle fields. get, list and watch cannot be narrowed so:
// cert-controller's informers list and watch every object of each kind,
// with no field selector, and RBAC authorizes a list or watch limited by
// resourceNames only when the request selects metadata.name
// (docs/security.md, "Roles").
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

const (
	certName = "tls.crt"
	keyName  = "tls.key"
)

// Options configure self-managed certificates.
type Options struct {
	// Namespace and SecretName locate the Secret holding CA and serving
	// certificate (Setup only). The Secret must exist (it may be empty).
	Namespace  string
	SecretName string
	// ServiceName is the webhook Service; the certificate is valid for its
	// in-cluster DNS names.
	ServiceName string
	// MetricsServiceName is the metrics Service (Setup only): the
	// certificate is valid for its in-cluster DNS names too, so that a
	// scraper verifies the metrics server (which serves CertDir) with the
	// CA in the Secret's ca.crt. Empty: none.
	MetricsServiceName string
	// ExtraDNSNames are further names the certificate is valid for
	// (e.g. "localhost" for a locally running manager).
	ExtraDNSNames []string
	// CertDir receives tls.crt and tls.key.
	CertDir string
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration name
	// the configurations to inject the CA into; empty names are skipped.
	MutatingWebhookConfiguration   string
	ValidatingWebhookConfiguration string
	// ConversionCRDs name the CRDs whose conversion webhook gets the CA.
	ConversionCRDs []string
	// Rotation times (Setup only); zero takes cert-controller's defaults,
	// in brackets. CertValidity (1 year) and CAValidity (10 years) are how
	// long a new serving certificate and CA are valid; either is made anew
	// once it expires within RenewBefore (90 days), checked every
	// CheckInterval (12 hours) and at each change of the Secret.
	CertValidity, CAValidity, RenewBefore, CheckInterval time.Duration
}

// ErrNoSecret says that the certificate Secret of Setup, or its namespace,
// does not exist or was not named: webhooks cannot be served with it.
var ErrNoSecret = errors.New("no certificate Secret")

// Setup adds the rotator (leader only) and the certificate writer (every
// replica) to mgr, and returns a readiness check: on the leader it passes
// once the CA is injected (so a ready operator's webhooks are trusted), on
// other replicas at once (they serve the leader's certificate). It returns
// an error wrapping ErrNoSecret, and adds nothing, when there is no
// namespace or the Secret does not exist.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) (healthz.Checker, error) {
	if o.Namespace == "" {
		return nil, fmt.Errorf("%w: the operator's namespace is not set (--operator-namespace or POD_NAMESPACE)", ErrNoSecret)
	}
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName}
	// Any other error (a narrower RBAC, say) is left to the rotator to report.
	if err := mgr.GetAPIReader().Get(ctx, key, &corev1.Secret{}); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s not found (or its namespace)", ErrNoSecret, key)
	}
	webhooks := make([]rotator.WebhookInfo, 0, 2+len(o.ConversionCRDs))
	if o.MutatingWebhookConfiguration != "" {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: o.MutatingWebhookConfiguration, Type: rotator.Mutating})
	}
	if o.ValidatingWebhookConfiguration != "" {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: o.ValidatingWebhookConfiguration, Type: rotator.Validating})
	}
	for _, crd := range o.ConversionCRDs {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: crd, Type: rotator.CRDConversion})
	}
	dnsNames := serviceDNSNames(o.ServiceName, o.Namespace)
	if o.MetricsServiceName != "" {
		// The rotator re-issues (from the same CA) a certificate that is not
		// valid for its first name: the metrics Service's, so that one issued
		// without it (by a version before it) is re-issued at once.
		dnsNames = append(serviceDNSNames(o.MetricsServiceName, o.Namespace), dnsNames...)
	}
	injected := make(chan struct{})
	if err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:              key,
		CertDir:                o.CertDir,
		CAName:                 "sunstrider-operator-ca",
		CAOrganization:         "sunstrider-operator",
		DNSName:                dnsNames[0],
		ExtraDNSNames:          append(dnsNames[1:], o.ExtraDNSNames...),
		IsReady:                injected,
		Webhooks:               webhooks,
		FieldOwner:             apply.FieldOwner,
		ServerCertDuration:     o.CertValidity,
		CaCertDuration:         o.CAValidity,
		LookaheadInterval:      o.RenewBefore,
		RotationCheckFrequency: o.CheckInterval,
		// Unique per process (controller-runtime refuses a name twice): one
		// rotator per Secret.
		ControllerName: "cert-rotator-" + o.SecretName,
		// Only the leader rotates; every replica serves.
		RequireLeaderElection: true,
		EnableReadinessCheck:  true,
	}); err != nil {
		return nil, fmt.Errorf("adding certificate rotator: %w", err)
	}
	secrets, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", o.SecretName)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating certificate Secret cache: %w", err)
	}
	if err := mgr.Add(&writer{cache: secrets, dir: o.CertDir}); err != nil {
		return nil, err
	}
	return func(*http.Request) error {
		select {
		case <-mgr.Elected():
		default:
			return nil
		}
		select {
		case <-injected:
			return nil
		default:
			return errors.New("the CA is not injected into the webhook configurations yet")
		}
	}, nil
}

// serviceDNSNames are the in-cluster DNS names of a Service, the one
// clients use first.
func serviceDNSNames(service, namespace string) []string {
	svc := service + "." + namespace + ".svc"
	return []string{svc, svc + ".cluster.local", service + "." + namespace}
}

// writer keeps CertDir equal to the serving certificate in the Secret,
// through a watch on that one Secret, on every replica.
type writer struct {
	cache cache.Cache
	dir   string
}

// NeedLeaderElection is false: every replica serves webhooks.
func (w *writer) NeedLeaderElection() bool { return false }

// Start watches the Secret and writes its certificate until ctx ends.
func (w *writer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("cert-writer")
	informer, err := w.cache.GetInformer(ctx, &corev1.Secret{})
	if err != nil {
		return fmt.Errorf("watching the certificate Secret: %w", err)
	}
	write := func(obj any) {
		secret, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		if err := writeCert(w.dir, secret.Data[certName], secret.Data[keyName]); err != nil {
			log.Error(err, "Writing the serving certificate failed", "dir", w.dir)
		}
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    write,
		UpdateFunc: func(_, obj any) { write(obj) },
	}); err != nil {
		return fmt.Errorf("watching the certificate Secret: %w", err)
	}
	return w.cache.Start(ctx)
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
