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

package webapp

import (
	"os"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// testImage is the guestbook image the tests' reconciler runs.
const testImage = "example.com/guestbook:test"

var (
	scheme = runtime.NewScheme()
	suite  = &testutil.Suite{Scheme: scheme, Setup: setupGuestbookController, Check: []client.Object{&webappv1.Guestbook{}}}
	// k8sClient talks to the API server directly.
	k8sClient client.Client
	// writes counts the API writes of the running manager.
	writes *testutil.WriteCounter
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	suite.BeforeRun = func() { k8sClient, writes = suite.Client, suite.Writes }
	os.Exit(suite.Run(m))
}

func setupGuestbookController(mgr ctrl.Manager) error {
	return (&GuestbookReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("sunstrider-operator"),
		// Production's cache holds no foreign child: a conflict is seen to
		// end by a recheck, made short here.
		ConflictRecheck: testutil.ConflictRecheck,
		Image:           testImage,
	}).SetupWithManager(mgr)
}

// startManager starts a fresh manager with a fresh write counter.
func startManager() error {
	err := suite.StartManager()
	writes = suite.Writes
	return err
}

func stopManager() { suite.StopManager() }
