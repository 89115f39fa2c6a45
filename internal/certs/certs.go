// Package certs gives the manager serving certificates for its webhooks
// without anyone's intervention, in one of three ways.
//
// Setup (--cert-mode=self, the deployed operator): the leader keeps a CA in
// a Secret of its own that only it reads (ca.crt, ca.key), a serving
// certificate that CA signs in a second Secret (tls.crt, tls.key and
// ca.crt, as cert-manager writes them), the CA in the webhook
// configurations and the CRDs' conversion stanzas, and ca.crt in a
// ConfigMap for scrapers (rotator.go); every replica writes the serving
// Secret's certificate to its certificate directory and starts serving
// webhooks only once it is there (serving.go). Without the serving Secret
// (or namespace) Setup returns ErrNoSecret and the caller runs without
// webhooks.
//
// PublishCA (--cert-mode=external, cert-manager): the leader copies ca.crt
// of the mounted certificate directory into the same ConfigMap.
//
// SetupLocal (--cert-mode=local, `make run`): one process outside the
// cluster keeps a CA and certificate for localhost in its certificate
// directory and injects the CA into whatever exists of the same objects; no
// namespace or Secret is needed (local.go).
//
// The rotation is written here rather than taken from a library:
// github.com/open-policy-agent/cert-controller, used before, keeps the CA
// key in the serving Secret, which every replica (and whoever may read that
// Secret, such as a scraper's operator reading ca.crt) then reads, and its
// caches list and watch every Secret of the namespace and every webhook
// configuration and CRD, which RBAC cannot narrow to the operator's own
// objects. Here every read of an object is by name: a GET, or a list and
// watch selecting metadata.name, which RBAC authorizes with resourceNames.
package certs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// The two Secrets live in the operator's own namespace, and the Role names
// them (config/default's namePrefix and the chart give the deployed
// objects these names with the prefix that cmd/main.go's defaults carry):
// the serving Secret is read by every replica (a watch of that one Secret)
// and updated by the leader; the CA Secret is read and updated by the
// leader only, by GET.
//
// The webhook configurations and CRDs are read (get; list and watch
// selecting one by name) with the ClusterRole below, which other
// controllers need whole; update of the operator's own is granted by
// config/rbac/ca_injection_role.yaml, a ClusterRole of its own, so that the
// installs where the manager injects no CA (cert-manager, OLM) leave it out
// whole, and config/rbac/manager_write_policy.yaml lets it change only
// their caBundle fields. The ConfigMap publishing ca.crt is written with
// the ClusterRole's ConfigMap rights (its children's), which that policy
// confines to this one ConfigMap in the operator's namespace.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,resourceNames=webhook-server-cert,verbs=get;list;watch;update
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,resourceNames=webhook-ca,verbs=get;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

const (
	certName = "tls.crt"
	keyName  = "tls.key"
)

// Rotation defaults (those of cert-controller, which the operator used
// before).
const (
	defaultCertValidity  = 365 * 24 * time.Hour
	defaultCAValidity    = 10 * 365 * 24 * time.Hour
	defaultRenewBefore   = 90 * 24 * time.Hour
	defaultCheckInterval = 12 * time.Hour
)

// Options configure self-managed certificates.
type Options struct {
	// Namespace and SecretName locate the Secret holding the serving
	// certificate (Setup only). The Secret must exist (it may be empty).
	Namespace  string
	SecretName string
	// CASecretName is the Secret, in Namespace, holding the CA certificate
	// and key (Setup only); it must exist (it may be empty) for the leader
	// to become ready.
	CASecretName string
	// CAConfigMapName is the ConfigMap, in Namespace, whose ca.crt the
	// leader keeps equal to the CA (Setup and PublishCA); empty: none.
	CAConfigMapName string
	// ServiceName is the webhook Service; the certificate is valid for its
	// in-cluster DNS names.
	ServiceName string
	// MetricsServiceName is the metrics Service (Setup only): the
	// certificate is valid for its in-cluster DNS names too, so that a
	// scraper verifies the metrics server (which serves CertDir) with the
	// CA in the ConfigMap. Empty: none.
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
	// Rotation times (Setup; CheckInterval also PublishCA); zero takes the
	// defaults, in brackets. CertValidity (1 year) and CAValidity (10
	// years) are how long a new serving certificate and CA are valid;
	// either is made anew once it expires within RenewBefore (90 days),
	// checked every CheckInterval (12 hours; PublishCA: 1 minute) and at
	// each change of the serving Secret, the webhook configurations and
	// the CRDs.
	CertValidity, CAValidity, RenewBefore, CheckInterval time.Duration
}

// withRotationDefaults fills in the zero rotation times and checks them.
func (o Options) withRotationDefaults() (Options, error) {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&o.CertValidity, defaultCertValidity},
		{&o.CAValidity, defaultCAValidity},
		{&o.RenewBefore, defaultRenewBefore},
		{&o.CheckInterval, defaultCheckInterval},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	switch {
	case o.CertValidity <= o.RenewBefore:
		return o, fmt.Errorf("certs.Options.CertValidity (%s) must exceed RenewBefore (%s)", o.CertValidity, o.RenewBefore)
	case o.CAValidity <= o.RenewBefore:
		return o, fmt.Errorf("certs.Options.CAValidity (%s) must exceed RenewBefore (%s)", o.CAValidity, o.RenewBefore)
	case o.CASecretName == "":
		return o, errors.New("certs.Options.CASecretName is empty")
	}
	return o, nil
}

// ErrNoSecret says that the serving certificate Secret of Setup, or its
// namespace, does not exist or was not named: webhooks cannot be served
// with it.
var ErrNoSecret = errors.New("no certificate Secret")

// Setup adds the rotator (leader only) and the certificate writer (every
// replica) to mgr, and returns a readiness check: on the leader it passes
// once the CA is injected (so a ready operator's webhooks are trusted), on
// other replicas at once (they serve the leader's certificate). It returns
// an error wrapping ErrNoSecret, and adds nothing, when there is no
// namespace or the serving Secret does not exist.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) (healthz.Checker, error) {
	if o.Namespace == "" {
		return nil, fmt.Errorf("%w: the operator's namespace is not set (--operator-namespace or POD_NAMESPACE)", ErrNoSecret)
	}
	o, err := o.withRotationDefaults()
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName}
	// Any other error (RBAC, say) is left to the writer and the rotator to
	// report.
	if err := mgr.GetAPIReader().Get(ctx, key, &corev1.Secret{}); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s not found (or its namespace)", ErrNoSecret, key)
	}
	dnsNames := serviceDNSNames(o.ServiceName, o.Namespace)
	if o.MetricsServiceName != "" {
		dnsNames = append(serviceDNSNames(o.MetricsServiceName, o.Namespace), dnsNames...)
	}
	r := &rotator{
		reader:   mgr.GetAPIReader(),
		client:   mgr.GetClient(),
		watches:  watches{cfg: mgr.GetConfig(), scheme: mgr.GetScheme(), mapper: mgr.GetRESTMapper()},
		o:        o,
		dnsNames: append(dnsNames, o.ExtraDNSNames...),
		targets:  targets(o),
		ca:       publisher{client: mgr.GetClient(), namespace: o.Namespace, name: o.CAConfigMapName},
		injected: make(chan struct{}),
	}
	if err := mgr.Add(r); err != nil {
		return nil, fmt.Errorf("adding the certificate rotator: %w", err)
	}
	if err := mgr.Add(&writer{watches: r.watches, secret: key, dir: o.CertDir}); err != nil {
		return nil, fmt.Errorf("adding the certificate writer: %w", err)
	}
	return func(*http.Request) error {
		select {
		case <-mgr.Elected():
		default:
			return nil
		}
		select {
		case <-r.injected:
			return nil
		default:
			return errors.New("the CA is not injected into the webhook configurations yet")
		}
	}, nil
}

// targets are the objects whose webhooks get the CA.
func targets(o Options) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, 2+len(o.ConversionCRDs))
	if o.MutatingWebhookConfiguration != "" {
		out = append(out, object(mutatingGVK, o.MutatingWebhookConfiguration))
	}
	if o.ValidatingWebhookConfiguration != "" {
		out = append(out, object(validatingGVK, o.ValidatingWebhookConfiguration))
	}
	for _, crd := range o.ConversionCRDs {
		out = append(out, object(crdGVK, crd))
	}
	return out
}

// serviceDNSNames are the in-cluster DNS names of a Service, the one
// clients use first.
func serviceDNSNames(service, namespace string) []string {
	svc := service + "." + namespace + ".svc"
	return []string{svc, svc + ".cluster.local", service + "." + namespace}
}
