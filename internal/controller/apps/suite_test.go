package apps

import (
	"os"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

var (
	scheme = runtime.NewScheme()
	suite  = &testutil.Suite{Scheme: scheme, Setup: setupApplicationController, Check: []client.Object{&sunappsv1.Application{}}}
	// k8sClient talks to the API server directly.
	k8sClient client.Client
	// writes counts the API writes of the running manager.
	writes *testutil.WriteCounter
	// reconciler is the running manager's Application reconciler.
	reconciler *ApplicationReconciler
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	suite.BeforeRun = func() { k8sClient, writes = suite.Client, suite.Writes }
	os.Exit(suite.Run(m))
}

// testStatusBatch is the suite's ApplicationReconciler.StatusBatch.
const testStatusBatch = time.Second

func setupApplicationController(mgr ctrl.Manager) error {
	reconciler = &ApplicationReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("sunstrider-operator"),
		// Production's cache holds no foreign child: a conflict is seen to
		// end by a recheck, made short here.
		ConflictRecheck: testutil.ConflictRecheck,
		// The tests wait for the status writes put off (a rollout's
		// counters, a hand edit of them put right): a shorter window than
		// production's, still a window.
		StatusBatch: testStatusBatch,
	}
	return reconciler.SetupWithManager(mgr)
}

// startManager starts a fresh manager with a fresh write counter.
func startManager() error {
	err := suite.StartManager()
	writes = suite.Writes
	return err
}

func stopManager() { suite.StopManager() }
