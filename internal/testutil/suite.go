package testutil

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/machinery"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Suite is one package's envtest control plane and the manager under test,
// whose API writes are counted. A package starts it once, from TestMain.
type Suite struct {
	// Scheme knows every type the package's tests and controllers use.
	Scheme *runtime.Scheme
	// Setup registers the package's controllers with a new manager.
	Setup func(ctrl.Manager) error
	// Options tune every manager's options (its cache, for instance).
	Options []func(*ctrl.Options)
	// Check lists the kinds (an object of each) whose every status, seen
	// through a watch, must keep the status invariants (StatusInvariants):
	// the suite fails when one does not, and, when all its tests ran, when
	// the operator wrote no status.observedGeneration of a kind (a kind
	// listed that nothing checked).
	Check []client.Object
	// BeforeRun, when set, runs once the control plane and the first manager
	// are up, before the tests (to copy Config, Client or Writes into package
	// variables).
	BeforeRun func()

	// Config reaches the API server as its administrator.
	Config *rest.Config
	// Client talks to the API server directly, without a cache.
	Client client.Client
	// Writes counts the running manager's API writes; a restart replaces it.
	Writes *WriteCounter
	// Reconciles counts the running manager's reconciles per object; a
	// restart replaces it.
	Reconciles *ReconcileLog
	// Cache reads the running manager's cache (what its controllers read);
	// a restart replaces it.
	Cache client.Reader

	stop func()
}

// Run starts the control plane, a client and a manager, runs the tests and
// tears everything down. It returns the exit code for os.Exit.
func (s *Suite) Run(m *testing.M) int {
	level := zapcore.ErrorLevel
	if os.Getenv("TEST_VERBOSE_LOGS") != "" {
		level = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(level)))

	env, err := NewEnvironment()
	if err != nil {
		return fail(err)
	}
	if s.Config, err = Start(env); err != nil {
		return fail(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	if s.Client, err = client.New(s.Config, client.Options{Scheme: s.Scheme}); err != nil {
		return fail(err)
	}
	if err := s.StartManager(); err != nil {
		return fail(err)
	}
	defer s.StopManager()
	var checker *InvariantChecker
	if len(s.Check) > 0 {
		if checker, err = StartInvariantChecker(s.Config, s.Scheme, s.Check...); err != nil {
			return fail(err)
		}
	}
	if s.BeforeRun != nil {
		s.BeforeRun()
	}
	code := m.Run()
	if checker != nil {
		if report := checker.Report(wholeRun()); report != "" {
			fmt.Fprintln(os.Stderr, "FAIL:", report)
			code = 1
		}
	}
	return code
}

// SuiteManagerAgent is the user agent of a Suite's manager, hence the
// field manager (managedFields) of its writes that name none, as the
// operator's status writes do: the tests' own clients keep client-go's
// (the test binary's name).
const SuiteManagerAgent = "sunstrider-operator-under-test"

// wholeRun tells whether the test binary runs all its tests: neither -run
// nor -skip was given.
func wholeRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// StartManager starts a fresh manager with a fresh write counter and
// reconcile log, set up by s.Setup, and waits for its caches to sync. Options may tune the manager's
// options (its cache, for instance).
func (s *Suite) StartManager(options ...func(*ctrl.Options)) error {
	s.Writes = NewWriteCounter()
	s.Reconciles = NewReconcileLog()
	opts := ctrl.Options{
		Scheme:                 s.Scheme,
		Logger:                 s.Reconciles.Logger(ctrl.Log),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The cache production runs with (label filters, transforms).
		Cache: machinery.CacheOptions(webappv1.LabelGuestbook),
		// Restart tests register the same controllers again in this process.
		Controller: config.Controller{SkipNameValidation: new(true)},
	}
	for _, option := range append(slices.Clone(s.Options), options...) {
		option(&opts)
	}
	cfg := s.Writes.Wrap(s.Config)
	// The field manager of the manager's writes that name none (status
	// patches): the invariant checker tells the operator's statuses by it.
	cfg.UserAgent = SuiteManagerAgent
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	if err := s.Setup(mgr); err != nil {
		return err
	}
	s.Cache = mgr.GetCache()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return fmt.Errorf("manager cache did not sync: %v", <-done)
	}
	s.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	})
	return nil
}

// StopManager stops the running manager and waits for it to end. Stopping
// a stopped manager does nothing.
func (s *Suite) StopManager() {
	if s.stop != nil {
		s.stop()
	}
}

// NewG returns a gomega bound to t with timeouts fit for envtest.
func NewG(t *testing.T) *gomega.WithT {
	g := gomega.NewWithT(t)
	g.SetDefaultEventuallyTimeout(20 * time.Second)
	g.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	g.SetDefaultConsistentlyDuration(time.Second)
	g.SetDefaultConsistentlyPollingInterval(50 * time.Millisecond)
	return g
}

// ExpectQuiet expects the running manager's controller to finish a
// reconcile of every one of keys since mark (nil: since the manager
// started) and view to count no write, from its last Drain until 3 s after
// the last of those reconciles (Events are sent in the background). Without
// the reconciles, "no write" would hold just as well for a controller that
// never looked.
func (s *Suite) ExpectQuiet(g gomega.Gomega, view *WriteView, mark ReconcileMark, controller string, keys ...client.ObjectKey) {
	s.ExpectReconciled(g, mark, controller, keys...)
	g.Expect(view.Total()).To(gomega.BeZero(), "writes:\n%s", view)
	g.Consistently(view.Total, "3s").Should(gomega.BeZero(), func() string { return "writes:\n" + view.String() })
}

// Keys returns the keys of objs.
func Keys[T client.Object](objs ...T) []client.ObjectKey {
	keys := make([]client.ObjectKey, len(objs))
	for i, obj := range objs {
		keys[i] = client.ObjectKeyFromObject(obj)
	}
	return keys
}

// ExpectReconciled waits until the running manager's controller has
// finished a reconcile of every one of keys since mark (nil: since the
// manager started).
func (s *Suite) ExpectReconciled(g gomega.Gomega, mark ReconcileMark, controller string, keys ...client.ObjectKey) {
	g.Eventually(func() []client.ObjectKey {
		return s.Reconciles.NotReconciledSince(mark, controller, keys...)
	}).Should(gomega.BeEmpty(), "objects %s has not reconciled", controller)
}

// ConflictRecheck is the conflict recheck interval of the controllers in
// envtest suites: short, so that a test sees a blocked parent recover once
// the foreign object is gone (the production cache does not hold it, so
// only the recheck notices).
const ConflictRecheck = 2 * time.Second
