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

package releasecheck

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	examplev1beta1 "sunstrider.cn/operator/api/example/v1beta1"
	"sunstrider.cn/operator/internal/access"
	"sunstrider.cn/operator/internal/testutil"
	appswebhookv1 "sunstrider.cn/operator/internal/webhook/apps/v1"
	examplewebhookv1 "sunstrider.cn/operator/internal/webhook/example/v1"
)

// TestRunAgainstTheWebhooks runs the probes behind a real kube-apiserver
// with the generated webhook configurations (config/webhook) and the
// Drink conversion pointed at a manager serving the Application and Drink
// webhooks, as a ServiceAccount holding Rules only (no right on any
// child, spec.childAccess Requester): they pass and store nothing; a
// ServiceAccount without Rules fails at once, saying so; once the manager
// has stopped they fail when the timeout ends, naming the webhook the API
// server could not call.
func TestRunAgainstTheWebhooks(t *testing.T) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	utilruntime.Must(examplev1alpha1.AddToScheme(scheme))
	utilruntime.Must(examplev1beta1.AddToScheme(scheme))

	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env, err := testutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	// The scheme's convertible kinds (Drink) get their conversion pointed
	// at the local webhook server.
	env.Scheme = scheme
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{filepath.Join(root, "config", "webhook")}}
	cfg, err := testutil.Start(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	stopWebhooks := serveWebhooks(t, cfg, scheme, &env.WebhookInstallOptions)

	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const namespace = "release"
	ctx := context.Background()
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "check"}, Rules: Rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "check"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "check"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: "check"}}},
	} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	as := func(sa string) client.Client {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + namespace + ":" + sa,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}}
		sc, err := client.New(c, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	opts := Options{Namespace: namespace, Timeout: 30 * time.Second, Interval: 100 * time.Millisecond}

	t.Run("PassesWithTheWebhooksServedAndStoresNothing", func(t *testing.T) {
		if err := Run(ctx, as("check"), opts, testr.New(t)); err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, obj := range []client.Object{&sunappsv1.Application{}, &examplev1.Drink{}} {
			err := admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ProbeName}, obj)
			if !apierrors.IsNotFound(err) {
				t.Errorf("%T %s after the dry runs: %v, want not found", obj, ProbeName, err)
			}
		}
	})

	t.Run("FailsAtOnceWithoutTheRole", func(t *testing.T) {
		start := time.Now()
		err := Run(ctx, as("other"), opts, testr.New(t))
		if err == nil || !apierrors.IsForbidden(err) ||
			!strings.Contains(err.Error(), "Application mutating and validating webhooks: dry-run create of Application") ||
			!strings.Contains(err.Error(), "the test ServiceAccount's Role must allow") {
			t.Fatalf("Run without the Role: %v, want the Application probe forbidden, naming the Role", err)
		}
		if took := time.Since(start); took > opts.Timeout/2 {
			t.Errorf("a forbidden probe was retried: %s", took)
		}
	})

	t.Run("FailsWhenTheWebhooksAreNotServed", func(t *testing.T) {
		stopWebhooks()
		short := opts
		short.Timeout = 2 * time.Second
		err := Run(ctx, as("check"), short, testr.New(t))
		if err == nil || !apierrors.IsInternalError(err) ||
			!strings.Contains(err.Error(), "still no answer from the webhooks after 2s") ||
			!strings.Contains(err.Error(), `failed calling webhook "mapplication-v1.sunstrider.cn"`) {
			t.Fatalf("Run with no webhook server: %v, want the mutating webhook's call failure after the timeout", err)
		}
	})
}

// serveWebhooks starts a manager serving the Application and Drink
// webhooks (and the Drink conversion) where envtest told the API server to
// find them, waits until it accepts TLS connections and returns the
// function stopping it (also called at the end of the test).
func serveWebhooks(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme, o *envtest.WebhookInstallOptions) func() {
	t.Helper()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	reviewer, err := access.NewReviewer(cfg, func() configv1alpha1.ChildAccess { return configv1alpha1.ChildAccessRequester })
	if err != nil {
		t.Fatal(err)
	}
	for _, setup := range []func(ctrl.Manager, *access.Reviewer) error{
		appswebhookv1.SetupApplicationWebhookWithManager, examplewebhookv1.SetupDrinkWebhookWithManager,
	} {
		if err := setup(mgr, reviewer); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook manager: %v", err)
		}
	}
	t.Cleanup(stop)
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	dialer := &net.Dialer{Timeout: time.Second}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		// #nosec G402 -- only probing that the local test server listens.
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	}); err != nil {
		t.Fatalf("the webhook server at %s never accepted TLS: %v", addr, err)
	}
	return stop
}
