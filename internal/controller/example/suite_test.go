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

package example

import (
	"os"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/testutil"
)

var (
	scheme = runtime.NewScheme()
	suite  = &testutil.Suite{Scheme: scheme, Setup: setupDrinkController, Check: []client.Object{&examplev1.Drink{}}}
	// k8sClient talks to the API server directly.
	k8sClient client.Client
	// writes counts the API writes of the running manager.
	writes *testutil.WriteCounter
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	suite.BeforeRun = func() { k8sClient, writes = suite.Client, suite.Writes }
	os.Exit(suite.Run(m))
}

// startManager starts a fresh manager with a fresh write counter; options
// may tune the manager's options.
func startManager(options ...func(*ctrl.Options)) error {
	err := suite.StartManager(options...)
	writes = suite.Writes
	return err
}

func stopManager() { suite.StopManager() }

// newG returns a gomega bound to t with timeouts fit for envtest.
func newG(t *testing.T) *WithT { return testutil.NewG(t) }

func setupDrinkController(mgr ctrl.Manager) error {
	return (&DrinkReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("sunstrider-operator"),
	}).SetupWithManager(mgr)
}
