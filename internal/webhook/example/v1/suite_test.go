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

package v1

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	"sunstrider.cn/operator/internal/access"
	"sunstrider.cn/operator/internal/testutil"
)

var (
	// scheme holds the three Drink versions: envtest points the conversion
	// of the CRDs of convertible kinds in it at the local webhook server.
	scheme = runtime.NewScheme()
	// k8sClient talks to the API server directly, without cache: each
	// typed Drink (v1, v1alpha1, v1beta1) is read and written in its own
	// version.
	k8sClient client.Client
	// webhookOptions are the local webhook server's address and certificates.
	webhookOptions *envtest.WebhookInstallOptions
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	utilruntime.Must(examplev1alpha1.AddToScheme(scheme))
	utilruntime.Must(examplev1beta1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	env, err := newEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := testutil.Start(env)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	webhookOptions = &env.WebhookInstallOptions
	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop, err := startWebhookServer(cfg, webhookOptions)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	return m.Run()
}

// newEnvironment returns the project's envtest environment with the Drink
// CRD and the generated webhook configurations (config/webhook) installed
// against a local webhook server.
func newEnvironment() (*envtest.Environment, error) {
	env, err := testutil.NewEnvironment()
	if err != nil {
		return nil, err
	}
	root, err := testutil.RepoRoot()
	if err != nil {
		return nil, err
	}
	// Only the Drink CRD: the suite does not depend on the other groups'.
	env.CRDDirectoryPaths = []string{filepath.Join(root, "config", "crd", "bases", "example.com_drinks.yaml")}
	env.Scheme = scheme
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{
		Paths: []string{filepath.Join(root, "config", "webhook")},
	}
	return env, nil
}

// startWebhookServer starts a manager serving the Drink webhooks where
// envtest told the API server to find them, waits until it accepts TLS
// connections and returns the function stopping it.
func startWebhookServer(cfg *rest.Config, o *envtest.WebhookInstallOptions) (func(), error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    o.LocalServingHost,
			Port:    o.LocalServingPort,
			CertDir: o.LocalServingCertDir,
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	reviewer, err := access.NewReviewer(cfg, func() configv1alpha1.ChildAccess { return configv1alpha1.ChildAccessRequester })
	if err != nil {
		return nil, err
	}
	if err := SetupDrinkWebhookWithManager(mgr, reviewer); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}
	if err := waitForTLS(o); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// waitForTLS waits until the webhook server completes a TLS handshake with
// a certificate signed by envtest's CA.
func waitForTLS(o *envtest.WebhookInstallOptions) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(o.LocalServingCAData) {
		return errors.New("envtest's webhook CA is not PEM")
	}
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	dialer := &net.Dialer{Timeout: time.Second}
	tlsConfig := &tls.Config{RootCAs: pool, ServerName: o.LocalServingHost, MinVersion: tls.VersionTLS12}
	var failure string
	g := NewGomega(func(message string, _ ...int) { failure = message })
	if !g.Eventually(func() error {
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, tlsConfig)
		if err != nil {
			return err
		}
		return conn.Close()
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed()) {
		return fmt.Errorf("webhook server at %s never accepted TLS: %s", addr, failure)
	}
	return nil
}

// zapLevel keeps test output short unless TEST_VERBOSE_LOGS is set.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE_LOGS") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// newG returns a gomega bound to t with timeouts fit for envtest.
func newG(t *testing.T) *WithT {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(20 * time.Second)
	g.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	return g
}
