/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command manager runs the sunstrider operator: the Application,
// MyCustomResource, Guestbook and Drink controllers in one process.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	appsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/access"
	"sunstrider.cn/operator/internal/certs"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
	examplecontroller "sunstrider.cn/operator/internal/controller/example"
	poccontroller "sunstrider.cn/operator/internal/controller/poc"
	webappcontroller "sunstrider.cn/operator/internal/controller/webapp"
	"sunstrider.cn/operator/internal/machinery"
	opmetrics "sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/metricsauth"
	"sunstrider.cn/operator/internal/version"
	appswebhook "sunstrider.cn/operator/internal/webhook/apps/v1"
	configwebhook "sunstrider.cn/operator/internal/webhook/config/v1alpha1"
	examplewebhook "sunstrider.cn/operator/internal/webhook/example/v1"
	pocwebhook "sunstrider.cn/operator/internal/webhook/poc/v1"
	webappwebhook "sunstrider.cn/operator/internal/webhook/webapp/v1"
	"sunstrider.cn/operator/internal/webhookauth"
	// +kubebuilder:scaffold:imports
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))

	utilruntime.Must(appsv1.AddToScheme(scheme))
	utilruntime.Must(pocv1.AddToScheme(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	utilruntime.Must(examplev1alpha1.AddToScheme(scheme))
	utilruntime.Must(examplev1beta1.AddToScheme(scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// options are the manager's command-line flags.
type options struct {
	metricsAddr                                      string
	metricsCertPath, metricsCertName, metricsCertKey string
	webhookCertPath, webhookCertName, webhookCertKey string
	// webhookClientCAPath, when set, is the PEM bundle of the CAs whose
	// client certificates the admission webhooks require (webhookauth).
	webhookClientCAPath                       string
	webhookPort                               int
	enableLeaderElection                      bool
	leaderElectionNamespace                   string
	leaseDuration, renewDeadline, retryPeriod time.Duration
	gracefulShutdownTimeout                   time.Duration
	probeAddr                                 string
	secureMetrics                             bool
	enableHTTP2                               bool
	guestbookImage                            string
	enableWebhooks                            bool
	certMode                                  string
	webhookSecretName                         string
	webhookCASecretName                       string
	webhookCAConfigMapName                    string
	webhookServiceName                        string
	metricsServiceName                        string
	webhookExtraDNSNames                      string
	operatorNamespace                         string
	pprofAddr                                 string
	maxConcurrentReconciles                   int
	kubeAPIQPS                                float64
	kubeAPIBurst                              int
	kubeAPICompression                        bool
	printVersion                              bool
	zap                                       zap.Options
	// metricsTokenAudiences: a metrics caller's token must be issued for
	// one of them (metricsauth.FilterProvider); none: the API server's own.
	metricsTokenAudiences []string
}

// Throughput defaults, chosen with `make bench` (docs/performance.md).
const (
	defaultMaxConcurrentReconciles = 16
	defaultKubeAPIQPS              = 500
	defaultKubeAPIBurst            = 1000
)

// Leader election defaults (docs/reliability.md). The lease and the renew
// deadline are controller-runtime's (and kube-controller-manager's); the
// retry period is 1 s instead of 2 s. After a leader dies without releasing
// its Lease, client-go's elector in the standby notices the last renewal up
// to 2.2 retry periods late and takes the expired Lease up to 2.2 retry
// periods after it expires: with 1 s the takeover is at most 15 + 4.4 = 19.4 s
// away (up to 23.8 s with 2 s), for one small Lease request per second and
// replica.
const (
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRetryPeriod   = time.Second
)

// defaultGracefulShutdownTimeout is how long the manager waits for its
// runnables to stop after SIGTERM before it releases the Lease and exits
// anyway. It must end well inside the Pod's terminationGracePeriodSeconds
// (10 s in config/manager and the chart; a test holds them together):
// controller-runtime's 30 s would let the kubelet kill a replica whose
// runnable does not stop (a certificate rotator stopped just after it
// took over has been seen to hang), before it released the Lease. 8 s
// leaves room for the webhook server, which waits up to about 5 s for the
// API server's connections to close.
const defaultGracefulShutdownTimeout = 8 * time.Second

const (
	// certModeSelf: the manager creates, rotates and injects its own
	// webhook certificate.
	certModeSelf = "self"
	// certModeExternal: something else (cert-manager) provides the
	// certificate in --webhook-cert-path and injects the CA.
	certModeExternal = "external"
	// certModeLocal: one manager process outside the cluster (`make run`)
	// keeps its CA and certificate for localhost in --webhook-cert-path and
	// injects the CA into the Drink CRD and the webhook configurations that
	// exist; it needs no namespace or Secret.
	certModeLocal = "local"
)

func parseFlags() *options {
	o := &options{zap: zap.Options{Development: false}}
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"Address the metrics endpoint binds to, e.g. :8443 for HTTPS or :8080 for HTTP; 0 disables it.")
	flag.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS behind Kubernetes authentication and authorization; "+
			"--metrics-secure=false serves plain HTTP.")
	flag.Func("metrics-token-audiences",
		"Comma-separated audiences a metrics caller's token must be issued for (one of them), named in the "+
			"metrics TokenReview. Empty: the API server's own (its --api-audiences), those of the ServiceAccount "+
			"token the kubelet mounts in each Pod, such as Prometheus' own. A token for another audience gets 401 "+
			"(docs/monitoring.md).",
		func(v string) error {
			audiences, err := metricsauth.ParseAudiences(v)
			o.metricsTokenAudiences = audiences
			return err
		})
	flag.StringVar(&o.metricsCertPath, "metrics-cert-path", "",
		"Directory holding the metrics server certificate, served once it is there (the deployed operator: "+
			"--webhook-cert-path, whose certificate is valid for --metrics-service-name); empty means a "+
			"self-signed one generated in memory, which no scraper can verify.")
	flag.StringVar(&o.metricsServiceName, "metrics-service-name", "sunstrider-operator-controller-manager-metrics-service",
		"Service in front of the metrics server; the self-managed certificate is valid for its DNS names too.")
	flag.StringVar(&o.metricsCertName, "metrics-cert-name", "tls.crt", "File name of the metrics server certificate.")
	flag.StringVar(&o.metricsCertKey, "metrics-cert-key", "tls.key", "File name of the metrics server key.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081",
		"Address the /healthz and /readyz probe endpoints bind to; 0 disables them.")
	flag.BoolVar(&o.enableLeaderElection, "leader-elect", false,
		"Elect a leader through a Lease so only one replica reconciles at a time. Required with more than one replica.")
	flag.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease; empty means the namespace the operator runs in.")
	flag.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", defaultLeaseDuration,
		"How long a standby waits after the leader's last renewal before taking the Lease.")
	flag.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", defaultRenewDeadline,
		"How long the leader keeps retrying a failed renewal before it gives leadership up and exits; "+
			"less than the lease duration.")
	flag.DurationVar(&o.retryPeriod, "leader-elect-retry-period", defaultRetryPeriod,
		"How often the leader renews the Lease and a standby tries to take it.")
	flag.DurationVar(&o.gracefulShutdownTimeout, "graceful-shutdown-timeout", defaultGracefulShutdownTimeout,
		"How long the manager waits for its controllers and servers to stop after SIGTERM before it releases the Lease "+
			"and exits anyway; less than the Pod's terminationGracePeriodSeconds.")
	flag.BoolVar(&o.enableWebhooks, "enable-webhooks", os.Getenv("ENABLE_WEBHOOKS") != "false",
		"Serve the admission and conversion webhooks (env ENABLE_WEBHOOKS=false turns them off).")
	flag.StringVar(&o.certMode, "cert-mode", certModeSelf,
		"Who provides the webhook certificate: 'self' (the manager creates and rotates it in --webhook-secret-name and "+
			"injects its CA; without that Secret webhooks are not served and the manager is not ready), "+
			"'external' (e.g. cert-manager mounts it in --webhook-cert-path) or 'local' (one manager outside the "+
			"cluster, make run: CA and certificate for localhost kept in --webhook-cert-path, CA injected into the "+
			"Drink CRD and the webhook configurations that exist; no namespace or Secret needed).")
	flag.StringVar(&o.webhookCertPath, "webhook-cert-path", "/tmp/k8s-webhook-server/serving-certs",
		"Directory holding the webhook serving certificate (written there by the manager in --cert-mode=self).")
	flag.StringVar(&o.webhookClientCAPath, "webhook-client-ca-path", "",
		"PEM bundle of the CAs whose client certificates the admission webhooks require: set it, with "+
			"kube-apiserver's --admission-control-config-file giving the API server such a certificate, and an "+
			"admission request from any other caller is refused (401). The conversion webhook needs none: "+
			"kube-apiserver calls it without one. Empty: callers are not authenticated (docs/security.md).")
	flag.StringVar(&o.webhookSecretName, "webhook-secret-name", "sunstrider-operator-webhook-server-cert",
		"Secret, in the operator's namespace, holding the self-managed serving certificate (tls.crt, tls.key, ca.crt); "+
			"every replica reads it.")
	flag.StringVar(&o.webhookCASecretName, "webhook-ca-secret-name", "sunstrider-operator-webhook-ca",
		"Secret, in the operator's namespace, holding the self-managed CA and its key (ca.crt, ca.key); only the "+
			"leader reads it.")
	flag.StringVar(&o.webhookCAConfigMapName, "webhook-ca-configmap-name", "sunstrider-operator-webhook-ca-bundle",
		"ConfigMap, in the operator's namespace, whose ca.crt the leader keeps equal to the webhook CA (the "+
			"self-managed one, or ca.crt in --webhook-cert-path with --cert-mode=external) for scrapers to "+
			"verify the metrics server; empty: none.")
	flag.StringVar(&o.webhookServiceName, "webhook-service-name", "sunstrider-operator-webhook-service",
		"Service in front of the webhook server; the self-managed certificate is valid for its DNS names.")
	flag.StringVar(&o.webhookExtraDNSNames, "webhook-extra-dns-names", "",
		"Comma-separated extra DNS names for the self-managed certificate (e.g. localhost for a local run; "+
			"--cert-mode=local always includes localhost, 127.0.0.1 and ::1).")
	flag.StringVar(&o.operatorNamespace, "operator-namespace", os.Getenv("POD_NAMESPACE"),
		"Namespace the operator runs in (env POD_NAMESPACE): home of its certificate Secrets (--cert-mode=self) and "+
			"CA ConfigMap.")
	flag.StringVar(&o.webhookCertName, "webhook-cert-name", "tls.crt", "File name of the webhook certificate.")
	flag.StringVar(&o.webhookCertKey, "webhook-cert-key", "tls.key", "File name of the webhook key.")
	flag.IntVar(&o.webhookPort, "webhook-port", 9443, "Port the webhook server listens on.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics and webhook servers (off by default: HTTP/2 Rapid Reset, CVE-2023-44487).")
	flag.StringVar(&o.guestbookImage, "guestbook-image", envOr("GUESTBOOK_IMAGE", webappcontroller.DefaultGuestbookImage),
		"Container image of Guestbook instances (env GUESTBOOK_IMAGE).")
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "0",
		"Address the pprof endpoint (/debug/pprof) binds to, e.g. :8082; 0 disables it.")
	flag.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", defaultMaxConcurrentReconciles,
		"Reconciles each controller runs at once (docs/performance.md).")
	flag.Float64Var(&o.kubeAPIQPS, "kube-api-qps", defaultKubeAPIQPS,
		"Sustained requests per second to the API server; a negative value disables client-side rate limiting.")
	flag.IntVar(&o.kubeAPIBurst, "kube-api-burst", defaultKubeAPIBurst,
		"Requests allowed in a burst above --kube-api-qps.")
	flag.BoolVar(&o.kubeAPICompression, "kube-api-compression", false,
		"Ask the API server to gzip its responses, watches included: for an API server reached over a slow link. "+
			"Off, as in kube-controller-manager: on the cluster's network gzip costs both sides CPU (docs/performance.md).")
	flag.BoolVar(&o.printVersion, "version", false, "Print the version and exit.")
	o.zap.BindFlags(flag.CommandLine)
	flag.Usage = func() {
		_, _ = fmt.Fprintf(flag.CommandLine.Output(), "Usage of %s:\n"+
			"Runs the sunstrider operator (Application, MyCustomResource, Guestbook, Drink)\n"+
			"against the cluster of $KUBECONFIG, or the in-cluster configuration.\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	return o
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == initConfigCommand {
		os.Exit(runInitConfig(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == checkReleaseCommand {
		os.Exit(runCheckRelease(os.Args[2:]))
	}
	o := parseFlags()
	if o.printVersion {
		fmt.Println(version.String())
		return
	}
	// The OperatorConfiguration's logLevel changes it while the manager runs.
	level := liveLevel(&o.zap)
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	setupLog.Info("Sunstrider operator", "version", version.Version, "revision", version.Revision)
	// sunstrider_operator_build_info on /metrics, beside controller-runtime's own metrics.
	metrics.Registry.MustRegister(version.NewBuildInfoCollector())
	if err := run(o, level); err != nil {
		setupLog.Error(err, "Manager failed")
		os.Exit(1)
	}
}

// run runs the manager until a signal, or until the OperatorConfiguration
// asks for a restart: it then returns nil, the process exits 0 and its
// Deployment starts it again.
func run(o *options, level atomicLevel) error {
	ctx, cancel := context.WithCancel(ctrl.SetupSignalHandler())
	defer cancel()
	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		// HTTP/2 Stream Cancellation and Rapid Reset: GHSA-qppj-fm5r-hxr3, GHSA-4374-p667-p6c8.
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	webhookTLSOpts := slices.Clone(tlsOpts)
	if o.webhookClientCAPath != "" {
		cas, err := webhookauth.LoadClientCAs(o.webhookClientCAPath)
		if err != nil {
			return err
		}
		webhookTLSOpts = append(webhookTLSOpts, webhookauth.TLSOption(cas))
	}
	webhookServer := webhook.NewServer(webhook.Options{
		TLSOpts:  webhookTLSOpts,
		Port:     o.webhookPort,
		CertDir:  o.webhookCertPath,
		CertName: o.webhookCertName,
		KeyName:  o.webhookCertKey,
	})
	if o.webhookClientCAPath != "" {
		webhookServer = webhookauth.Server{Server: webhookServer}
	}
	if o.certMode != certModeExternal {
		// The server starts once the manager has written its certificate.
		webhookServer = certs.NewServer(webhookServer, o.webhookCertPath)
	}

	metricsServerOptions := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       tlsOpts,
	}
	if o.secureMetrics {
		// Only callers allowed to GET /metrics (config/rbac/metrics_reader_role.yaml) are served.
		metricsServerOptions.FilterProvider = metricsauth.FilterProvider(o.metricsTokenAudiences)
	} else if len(o.metricsTokenAudiences) > 0 {
		return errors.New("--metrics-token-audiences needs --metrics-secure: plain HTTP metrics take no token")
	}
	var metricsCert *certs.FileCertificate
	if o.metricsCertPath != "" {
		// Served once there: in --cert-mode=self the manager writes it after it starts.
		metricsCert = certs.NewFileCertificate(o.metricsCertPath, o.metricsCertName, o.metricsCertKey)
		metricsServerOptions.TLSOpts = append(slices.Clone(tlsOpts),
			func(c *tls.Config) { c.GetCertificate = metricsCert.GetCertificate })
	}

	restConfig := machinery.APIClient{
		QPS:         float32(o.kubeAPIQPS),
		Burst:       o.kubeAPIBurst,
		Compression: o.kubeAPICompression,
	}.Config(ctrl.GetConfigOrDie())
	// The OperatorConfiguration over the flags (docs/configuration.md).
	live, err := loadConfiguration(ctx, restConfig, o, level, cancel)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                  scheme,
		PprofBindAddress:        o.pprofAddr,
		Controller:              config.Controller{MaxConcurrentReconciles: o.maxConcurrentReconciles},
		Metrics:                 metricsServerOptions,
		WebhookServer:           webhookServer,
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.enableLeaderElection,
		LeaderElectionID:        "sunstrider-operator.sunstrider.cn",
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// The process exits as soon as the manager stops, so releasing the
		// Lease on cancel is safe and hands over leadership at once.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
		GracefulShutdownTimeout:       &o.gracefulShutdownTimeout,
		Cache:                         live.cacheOptions(),
		// Owns asks for the owner's scope at every event of a child.
		MapperProvider: func(c *rest.Config, h *http.Client) (meta.RESTMapper, error) {
			mapper, err := apiutil.NewDynamicRESTMapper(c, h)
			if err != nil {
				return nil, err
			}
			return machinery.MemoizeMappings(mapper), nil
		},
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if metricsCert != nil {
		if err := mgr.Add(metricsCert); err != nil {
			return fmt.Errorf("adding the metrics certificate: %w", err)
		}
	}
	if err := setupControllers(mgr, live); err != nil {
		return err
	}
	if err := registerMetrics(mgr, o, live); err != nil {
		return err
	}
	// +kubebuilder:scaffold:builder

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}
	// The OperatorConfiguration's status says Unenforced when no webhook
	// checks a requester's rights (access.Webhooks).
	live.webhooks.NotServed = "--enable-webhooks=false"
	if o.enableWebhooks {
		served, err := setupWebhooks(ctx, mgr, o, live)
		if err != nil {
			return err
		}
		live.webhooks.NotServed = ""
		if !served {
			live.webhooks.NotServed = "no certificate Secret " + o.webhookSecretName
		}
		// Not ready until the webhook server serves with its certificate.
		if served {
			if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
				return fmt.Errorf("adding webhook ready check: %w", err)
			}
		}
	}

	setupLog.Info("Starting manager")
	return mgr.Start(ctx)
}

// The objects whose webhook client configurations carry the operator's CA.
const (
	mutatingWebhookConfiguration   = "sunstrider-operator-mutating-webhook-configuration"
	validatingWebhookConfiguration = "sunstrider-operator-validating-webhook-configuration"
	drinkCRD                       = "drinks.example.com"
)

// setupWebhooks provides the serving certificate as --cert-mode says and
// registers the webhooks. It tells whether they are served: not when
// --cert-mode=self finds no certificate Secret, which it logs in one line
// while the controllers run on and the manager reports not ready.
func setupWebhooks(ctx context.Context, mgr ctrl.Manager, o *options, live *liveConfig) (bool, error) {
	var extra []string
	if o.webhookExtraDNSNames != "" {
		extra = strings.Split(o.webhookExtraDNSNames, ",")
	}
	certOpts := certs.Options{
		Namespace:                      o.operatorNamespace,
		SecretName:                     o.webhookSecretName,
		CASecretName:                   o.webhookCASecretName,
		CAConfigMapName:                o.webhookCAConfigMapName,
		ServiceName:                    o.webhookServiceName,
		MetricsServiceName:             o.metricsServiceName,
		ExtraDNSNames:                  extra,
		CertDir:                        o.webhookCertPath,
		MutatingWebhookConfiguration:   mutatingWebhookConfiguration,
		ValidatingWebhookConfiguration: validatingWebhookConfiguration,
		ConversionCRDs:                 []string{drinkCRD},
	}
	var certsReady healthz.Checker
	switch o.certMode {
	case certModeSelf:
		ready, err := certs.Setup(ctx, mgr, certOpts)
		if errors.Is(err, certs.ErrNoSecret) {
			setupLog.Info("Webhooks are not served and the manager reports not ready: config/default creates "+
				"the certificate Secret; --cert-mode=local (make run) needs none", "reason", err.Error())
			return false, mgr.AddReadyzCheck("certificates", func(*http.Request) error { return err })
		}
		if err != nil {
			return false, err
		}
		certsReady = ready
	case certModeLocal:
		ready, missing, err := certs.SetupLocal(ctx, mgr, certOpts)
		if err != nil {
			return false, err
		}
		setupLog.Info("Serving webhooks with a local certificate", "port", o.webhookPort,
			"hosts", append(append([]string{}, certs.LocalHosts...), extra...), "certDir", o.webhookCertPath,
			"conversion", drinkCRD)
		if len(missing) > 0 {
			setupLog.Info("Admission webhooks are not registered in the cluster: objects are checked by the CRD "+
				"schemas only (make dev or make deploy registers them)", "missing", missing)
		}
		certsReady = ready
	case certModeExternal:
		if err := certs.PublishCA(mgr, certOpts); err != nil {
			return false, fmt.Errorf("adding the CA publisher: %w", err)
		}
	default:
		return false, fmt.Errorf("--cert-mode must be %q, %q or %q, not %q",
			certModeSelf, certModeLocal, certModeExternal, o.certMode)
	}
	if certsReady != nil {
		if err := mgr.AddReadyzCheck("certificates", certsReady); err != nil {
			return false, fmt.Errorf("adding certificate ready check: %w", err)
		}
	}
	// The requester's RBAC decides what an object may make, unless the
	// OperatorConfiguration delegates (docs/security.md); read at every request.
	reviewer, err := access.NewReviewer(mgr.GetConfig(), func() configv1alpha1.ChildAccess {
		return live.holder.Load().ChildAccess
	})
	if err != nil {
		return false, err
	}
	// The kube-* namespaces Guestbooks may use, read at every request.
	setupGuestbookWebhook := func(m ctrl.Manager, r *access.Reviewer) error {
		return webappwebhook.SetupGuestbookWebhookWithManager(m, r, func() []string {
			return live.holder.Load().GuestbookSystemNamespaces
		})
	}
	for name, setup := range map[string]func(ctrl.Manager, *access.Reviewer) error{
		"Application":           appswebhook.SetupApplicationWebhookWithManager,
		"MyCustomResource":      pocwebhook.SetupMyCustomResourceWebhookWithManager,
		"Guestbook":             setupGuestbookWebhook,
		"Drink":                 examplewebhook.SetupDrinkWebhookWithManager,
		"OperatorConfiguration": configwebhook.SetupOperatorConfigurationWebhookWithManager,
	} {
		if err := setup(mgr, reviewer); err != nil {
			return false, fmt.Errorf("setting up the %s webhook: %w", name, err)
		}
	}
	return true, nil
}

// setupControllers registers the controllers the OperatorConfiguration
// enables, the Guestbook and Application ones reading the live settings,
// and the OperatorConfiguration's own.
func setupControllers(mgr ctrl.Manager, live *liveConfig) error {
	recorder := mgr.GetEventRecorder("sunstrider-operator")
	enabled := live.started.Controllers
	reconcilers := map[string]interface{ SetupWithManager(ctrl.Manager) error }{
		appscontroller.ControllerName: &appscontroller.ApplicationReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
			Settings: live.holder,
		},
		poccontroller.ControllerName: &poccontroller.MyCustomResourceReconciler{
			Client: mgr.GetClient(), Recorder: recorder,
		},
		webappcontroller.ControllerName: &webappcontroller.GuestbookReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
			Settings: live.holder,
		},
		examplecontroller.ControllerName: &examplecontroller.DrinkReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
		},
	}
	for name, on := range map[string]bool{
		appscontroller.ControllerName: enabled.Application, poccontroller.ControllerName: enabled.MyCustomResource,
		webappcontroller.ControllerName: enabled.Guestbook, examplecontroller.ControllerName: enabled.Drink,
	} {
		if !on {
			setupLog.Info("Controller disabled by the OperatorConfiguration", "controller", name)
			delete(reconcilers, name)
		}
	}
	for name, c := range reconcilers {
		if err := c.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up controller %s: %w", name, err)
		}
	}
	return setupConfigurationController(mgr, live)
}

// registerMetrics registers the operator's metrics that read it at scrape
// time (internal/metrics): its objects by Ready, from the cache of the
// controllers that run, the webhook certificate's expiry and the
// OperatorConfiguration's generation in effect.
func registerMetrics(mgr ctrl.Manager, o *options, live *liveConfig) error {
	opts := opmetrics.Options{Cache: mgr.GetCache(), Elected: mgr.Elected()}
	enabled := live.started.Controllers
	for _, k := range []struct {
		kind opmetrics.Kind
		on   bool
	}{
		{opmetrics.Application, enabled.Application}, {opmetrics.MyCustomResource, enabled.MyCustomResource},
		{opmetrics.Guestbook, enabled.Guestbook}, {opmetrics.Drink, enabled.Drink},
	} {
		if k.on {
			opts.Kinds = append(opts.Kinds, k.kind)
		}
	}
	if o.enableWebhooks {
		certFile := filepath.Join(o.webhookCertPath, o.webhookCertName)
		opts.WebhookCertificate = func() (time.Time, error) { return certs.NotAfter(certFile) }
	}
	gk := configv1alpha1.GroupVersion.WithKind("OperatorConfiguration").GroupKind()
	_, err := mgr.GetRESTMapper().RESTMapping(gk, configv1alpha1.GroupVersion.Version)
	opts.Configuration = err == nil
	if err := opmetrics.Register(metrics.Registry, opts); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	return nil
}
