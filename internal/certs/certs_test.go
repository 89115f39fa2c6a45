package certs_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/access"
	"sunstrider.cn/operator/internal/certs"
	"sunstrider.cn/operator/internal/testutil"
	appswebhook "sunstrider.cn/operator/internal/webhook/apps/v1"
	examplewebhook "sunstrider.cn/operator/internal/webhook/example/v1"
	pocwebhook "sunstrider.cn/operator/internal/webhook/poc/v1"
	webappwebhook "sunstrider.cn/operator/internal/webhook/webapp/v1"
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(sunappsv1.AddToScheme(s))
	utilruntime.Must(pocv1.AddToScheme(s))
	utilruntime.Must(webappv1.AddToScheme(s))
	utilruntime.Must(examplev1.AddToScheme(s))
	utilruntime.Must(examplev1alpha1.AddToScheme(s))
	utilruntime.Must(examplev1beta1.AddToScheme(s))
	return s
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// cluster is an envtest API server with the operator's CRDs (the Drink CRD
// converting through a local webhook server) and webhook configurations.
type cluster struct {
	cfg    *rest.Config
	client client.Client
	scheme *runtime.Scheme
	wio    envtest.WebhookInstallOptions
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	g := NewWithT(t)
	scheme := newScheme()
	env, err := testutil.NewEnvironment()
	g.Expect(err).NotTo(HaveOccurred())
	root, err := testutil.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	env.Scheme = scheme
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{
		Paths:                        []string{filepath.Join(root, "config", "webhook")},
		LocalServingHostExternalName: "localhost",
	}
	cfg, err := testutil.Start(env)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	renameWebhookConfigurations(g, c)
	return &cluster{cfg: cfg, client: c, scheme: scheme, wio: env.WebhookInstallOptions}
}

// renameWebhookConfigurations gives the webhook configurations envtest
// installed from config/webhook the names config/default gives them (its
// namePrefix), which the shipped RBAC names.
func renameWebhookConfigurations(g Gomega, c client.Client) {
	ctx := context.Background()
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "mutating-webhook-configuration"}, mutating)).To(Succeed())
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "validating-webhook-configuration"}, validating)).To(Succeed())
	for obj, name := range map[client.Object]string{mutating: mutatingName, validating: validatingName} {
		g.Expect(c.Delete(ctx, obj)).To(Succeed())
		obj.SetName(name)
		obj.SetResourceVersion("")
		obj.SetUID("")
		g.Expect(c.Create(ctx, obj)).To(Succeed())
	}
}

// newManager makes a manager whose webhook server serves the certificate in
// certDir once it is there, with probes on probePort, connecting with cfg.
func (c *cluster) newManager(t *testing.T, cfg *rest.Config, certDir string, probePort int) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 c.scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: fmt.Sprintf("127.0.0.1:%d", probePort),
		WebhookServer: certs.NewServer(webhook.NewServer(webhook.Options{
			Host: c.wio.LocalServingHost, Port: c.wio.LocalServingPort, CertDir: certDir,
		}), certDir),
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return mgr
}

// serveWebhooks registers the operator's webhooks and the readiness checks
// on mgr, starts it, and waits until it is ready.
func serveWebhooks(t *testing.T, mgr ctrl.Manager, certsReady healthz.Checker, probePort int) {
	t.Helper()
	g := NewWithT(t)
	reviewer, err := access.NewReviewer(mgr.GetConfig(), func() configv1alpha1.ChildAccess {
		return configv1alpha1.ChildAccessRequester
	})
	g.Expect(err).NotTo(HaveOccurred())
	for _, setup := range []func(ctrl.Manager, *access.Reviewer) error{
		appswebhook.SetupApplicationWebhookWithManager,
		pocwebhook.SetupMyCustomResourceWebhookWithManager,
		func(m ctrl.Manager, r *access.Reviewer) error {
			return webappwebhook.SetupGuestbookWebhookWithManager(m, r, nil)
		},
		examplewebhook.SetupDrinkWebhookWithManager,
	} {
		g.Expect(setup(mgr, reviewer)).To(Succeed())
	}
	g.Expect(mgr.AddReadyzCheck("certificates", certsReady)).To(Succeed())
	g.Expect(mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker())).To(Succeed())
	g.Expect(mgr.AddHealthzCheck("ping", healthz.Ping)).To(Succeed())

	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort)
	g.Eventually(func() (int, error) {
		resp, err := http.Get(readyz)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}, 60*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK))
}

// expectConversion writes a Drink as v1alpha1 in namespace and reads it as
// v1 through the conversion webhook, which the API server must trust.
func expectConversion(g Gomega, c client.Client, namespace string) {
	ctx := context.Background()
	alpha := &examplev1alpha1.Drink{
		ObjectMeta: metav1.ObjectMeta{Name: "order", Namespace: namespace},
		Spec:       examplev1alpha1.DrinkSpec{Order: "coffee for joe"},
	}
	g.Expect(c.Create(ctx, alpha)).To(Succeed())
	hub := &examplev1.Drink{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(alpha), hub)).To(Succeed())
	g.Expect(hub.Spec.Drink).To(Equal("coffee"))
	g.Expect(hub.Spec.Name).To(Equal("joe"))
}

// TestManagerWithoutCertificateBecomesReadyAndServes starts a manager as
// the shipped ServiceAccount, with exactly the shipped RBAC and write
// policy, an empty certificate directory and the empty Secrets: it must
// create its CA (in the CA Secret only) and serving certificate, inject the
// CA into the webhook configurations and the Drink CRD's conversion stanza,
// publish it in the ConfigMap, become ready, and then serve admission and
// conversion that the API server trusts.
func TestManagerWithoutCertificateBecomesReadyAndServes(t *testing.T) {
	// Each test runs its own control plane: they wait on it side by side.
	t.Parallel()
	g := NewWithT(t)
	cl := startCluster(t)
	c := cl.client
	ctx := context.Background()
	operator := cl.installShipped(t)

	certDir := filepath.Join(t.TempDir(), "certs")
	probePort := freePort(t)
	mgr := cl.newManager(t, operator, certDir, probePort)
	ready, err := certs.Setup(ctx, mgr, selfOptions(certDir))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = os.Stat(filepath.Join(certDir, "tls.crt"))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "no certificate before the manager starts")
	serveWebhooks(t, mgr, ready, probePort)

	// The CA is apart from the serving certificate, which is on disk.
	eventuallySeparateKeys(g, c)
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret)).To(Succeed())
	onDisk, err := os.ReadFile(filepath.Join(certDir, "tls.crt"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(onDisk).To(Equal(secret.Data["tls.crt"]))

	// Admission: the API server trusts the injected CA and the webhook answers.
	// Template labels contradicting the selector: only the webhook checks that.
	err = c.Create(ctx, application("bad", "b"))
	g.Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(containsDenial(err.Error())).To(BeTrue(), "%v", err)

	// Conversion: written as v1alpha1, read as v1 through the webhook.
	expectConversion(g, c, namespace)

	// A caBundle someone resets is injected again.
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: validatingName}, validating)).To(Succeed())
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig.CABundle = nil
	}
	g.Expect(c.Update(ctx, validating)).To(Succeed())
	eventuallySeparateKeys(g, c)
}

// TestSetupWithoutSecretSaysSo: with no namespace, or no Secret, Setup adds
// nothing and says why, so that the caller runs without webhooks.
func TestSetupWithoutSecretSaysSo(t *testing.T) {
	// Each test runs its own control plane: they wait on it side by side.
	t.Parallel()
	g := NewWithT(t)
	cl := startCluster(t)
	for _, ns := range []string{"", "absent"} {
		mgr := cl.newManager(t, cl.cfg, t.TempDir(), freePort(t))
		o := selfOptions(t.TempDir())
		o.Namespace = ns
		_, err := certs.Setup(context.Background(), mgr, o)
		g.Expect(err).To(MatchError(certs.ErrNoSecret), "namespace %q", ns)
	}
	g.Expect(cl.client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).
		To(Succeed())
	_, err := certs.Setup(context.Background(), cl.newManager(t, cl.cfg, t.TempDir(), freePort(t)), selfOptions(t.TempDir()))
	g.Expect(err).To(MatchError(certs.ErrNoSecret), "no Secret")
}

// TestLocalManagerServesWithoutNamespaceOrSecret is `make run` after `make
// install`: no operator namespace, no Secret, no validating webhook
// configuration. The manager makes its certificate in its directory, injects
// the CA into the Drink CRD and the one webhook configuration that exists,
// reports the missing one, becomes ready and serves conversion; a restart
// reuses the certificate.
func TestLocalManagerServesWithoutNamespaceOrSecret(t *testing.T) {
	// Each test runs its own control plane: they wait on it side by side.
	t.Parallel()
	g := NewWithT(t)
	cl := startCluster(t)
	c := cl.client
	ctx := context.Background()

	g.Expect(c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: validatingName},
	})).To(Succeed())
	certDir := filepath.Join(t.TempDir(), "certs")
	opts := certs.Options{
		CertDir:                        certDir,
		MutatingWebhookConfiguration:   mutatingName,
		ValidatingWebhookConfiguration: validatingName,
		ConversionCRDs:                 []string{drinkCRD},
	}
	probePort := freePort(t)
	mgr := cl.newManager(t, cl.cfg, certDir, probePort)
	ready, missing, err := certs.SetupLocal(ctx, mgr, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(Equal([]string{validatingName}))
	ca, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	g.Expect(err).NotTo(HaveOccurred())
	serveWebhooks(t, mgr, ready, probePort)

	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: drinkCRD}, crd)).To(Succeed())
	g.Expect(crd.Spec.Conversion.Webhook.ClientConfig.CABundle).To(Equal(ca))
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: mutatingName}, mutating)).To(Succeed())
	for _, h := range mutating.Webhooks {
		g.Expect(h.ClientConfig.CABundle).To(Equal(ca), "webhook %s", h.Name)
	}
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "local"}})).To(Succeed())
	expectConversion(g, c, "local")

	// A second run keeps the certificate (and so the injected CA).
	_, _, err = certs.SetupLocal(ctx, cl.newManager(t, cl.cfg, certDir, freePort(t)), opts)
	g.Expect(err).NotTo(HaveOccurred())
	again, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(ca))
}
