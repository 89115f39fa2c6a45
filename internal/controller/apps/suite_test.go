package apps

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/zap/zapcore"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

var (
	scheme    = runtime.NewScheme()
	cfg       *rest.Config
	k8sClient client.Client
	// writes counts the API writes of the running manager.
	writes *testutil.WriteCounter
	// stopManager stops the running manager and waits for it to end.
	stopManager func()
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	env, err := testutil.NewEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err = testutil.Start(env)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopEnv(env)
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startManager(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { stopManager() }()
	return m.Run()
}

func stopEnv(env *envtest.Environment) {
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
}

// startManager starts a fresh manager, with a fresh write counter, running
// the Application controller, and waits for its caches to sync.
func startManager() error {
	writes = testutil.NewWriteCounter()
	mgr, err := ctrl.NewManager(writes.Wrap(cfg), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The restart test registers the same controller name again.
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		return err
	}
	if err := (&ApplicationReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("sunstrider-operator"),
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return fmt.Errorf("manager cache did not sync: %v", <-done)
	}
	stopManager = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	})
	return nil
}

// zapLevel keeps test output short unless TEST_VERBOSE_LOGS is set.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE_LOGS") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
