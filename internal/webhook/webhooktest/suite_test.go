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

// Package webhooktest runs the admission webhooks of every API group behind
// a real kube-apiserver: one envtest control plane, the generated
// config/webhook configurations, and a manager serving the webhooks.
package webhooktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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
	"sunstrider.cn/operator/internal/testutil"
	appswebhookv1 "sunstrider.cn/operator/internal/webhook/apps/v1"
	configwebhookv1alpha1 "sunstrider.cn/operator/internal/webhook/config/v1alpha1"
	examplewebhookv1 "sunstrider.cn/operator/internal/webhook/example/v1"
	pocwebhookv1 "sunstrider.cn/operator/internal/webhook/poc/v1"
	webappwebhookv1 "sunstrider.cn/operator/internal/webhook/webapp/v1"
	"sunstrider.cn/operator/internal/webhookauth"
)

// k8sClient talks to the API server directly, without a cache, so every
// read sees what the server stored.
var k8sClient client.Client

// restConfig is the envtest administrator's, for clients impersonating
// users.
var restConfig *rest.Config

// apiServer is the client certificate the suite's kube-apiserver presents
// to the webhooks; webhookAddress is where they are served, with a
// certificate of webhookServingCA.
var (
	apiServer        *apiServerClient
	webhookAddress   string
	webhookServingCA []byte
)

// childAccess is the OperatorConfiguration's spec.childAccess the webhooks
// read at every request, as the operator's live settings; tests that change
// it put it back.
var childAccess atomic.Value

// systemNamespaces is the OperatorConfiguration's
// spec.guestbookSystemNamespaces the Guestbook webhook reads at every
// request, as the operator's live settings; tests that change it put it
// back.
var systemNamespaces atomic.Pointer[[]string]

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(sunappsv1.AddToScheme(s))
	utilruntime.Must(pocv1.AddToScheme(s))
	utilruntime.Must(webappv1.AddToScheme(s))
	utilruntime.Must(examplev1.AddToScheme(s))
	utilruntime.Must(examplev1alpha1.AddToScheme(s))
	utilruntime.Must(examplev1beta1.AddToScheme(s))
	utilruntime.Must(configv1alpha1.AddToScheme(s))
	return s
}

// setups registers every webhook the operator serves, as cmd/main.go does.
var setups = []func(ctrl.Manager, *access.Reviewer) error{
	appswebhookv1.SetupApplicationWebhookWithManager,
	pocwebhookv1.SetupMyCustomResourceWebhookWithManager,
	func(mgr ctrl.Manager, reviewer *access.Reviewer) error {
		return webappwebhookv1.SetupGuestbookWebhookWithManager(mgr, reviewer, func() []string {
			if ns := systemNamespaces.Load(); ns != nil {
				return *ns
			}
			return nil
		})
	},
	examplewebhookv1.SetupDrinkWebhookWithManager,
	configwebhookv1alpha1.SetupOperatorConfigurationWebhookWithManager,
}

func run(m *testing.M) (code int, err error) {
	root, err := testutil.RepoRoot()
	if err != nil {
		return 0, err
	}
	env, err := testutil.NewEnvironment()
	if err != nil {
		return 0, err
	}
	scheme := newScheme()
	env.Scheme = scheme
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{filepath.Join(root, "config", "webhook")}}
	if apiServer, err = newAPIServerClient(); err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(apiServer.dir) }()
	apiServer.configure(env)
	cfg, err := testutil.Start(env)
	if err != nil {
		return 0, err
	}
	defer func() {
		if stopErr := env.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stopping envtest: %w", stopErr)
		}
	}()

	wio := &env.WebhookInstallOptions
	webhookAddress = net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort))
	webhookServingCA = wio.LocalServingCAData
	clientCAs, err := webhookauth.LoadClientCAs(apiServer.caPath)
	if err != nil {
		return 0, err
	}
	// The webhooks require the API server's client certificate, as
	// --webhook-client-ca-path has cmd/main.go set them up.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhookauth.Server{Server: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
			TLSOpts: []func(*tls.Config){webhookauth.TLSOption(clientCAs)},
		})},
	})
	if err != nil {
		return 0, fmt.Errorf("creating manager: %w", err)
	}
	restConfig = cfg
	childAccess.Store(configv1alpha1.ChildAccessRequester)
	reviewer, err := access.NewReviewer(cfg, func() configv1alpha1.ChildAccess {
		return childAccess.Load().(configv1alpha1.ChildAccess)
	})
	if err != nil {
		return 0, err
	}
	for _, setup := range setups {
		if err := setup(mgr, reviewer); err != nil {
			return 0, err
		}
	}
	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return 0, fmt.Errorf("creating client: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var mgrErr error
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		mgrErr = mgr.Start(ctx)
	}()
	defer func() {
		cancel()
		<-stopped
		if mgrErr != nil && err == nil {
			err = fmt.Errorf("running manager: %w", mgrErr)
		}
	}()
	if err := waitForWebhookServer(ctx, wio, stopped, &mgrErr); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// waitForWebhookServer returns once the webhook server accepts TLS
// connections, or fails when the manager stops (stopped closed, *mgrErr set) or a minute passes.
func waitForWebhookServer(ctx context.Context, wio *envtest.WebhookInstallOptions, stopped <-chan struct{}, mgrErr *error) error {
	addr := net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort))
	dialer := &net.Dialer{Timeout: time.Second}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-stopped:
			return false, fmt.Errorf("manager stopped: %w", *mgrErr)
		default:
		}
		// #nosec G402 -- only probing that the local test server listens.
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
	if err != nil {
		return errors.Join(fmt.Errorf("webhook server at %s not serving", addr), err)
	}
	return nil
}
