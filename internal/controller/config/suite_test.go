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

package config

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/access"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
	webappcontroller "sunstrider.cn/operator/internal/controller/webapp"
	"sunstrider.cn/operator/internal/settings"
	"sunstrider.cn/operator/internal/testutil"
)

// defaults are the suite's flags: a conflict recheck far longer than any
// test, so that a recovery within a test shows the configuration's interval.
var defaults = settings.Settings{
	GuestbookImage:          "example.com/guestbook:flag",
	GuestbookResources:      settings.DefaultGuestbookResources(),
	ConflictRecheckInterval: 10 * time.Minute,
	LogLevel:                "info",
	ChildAccess:             settings.DefaultChildAccess,
	Controllers:             settings.AllControllers,
}

var (
	scheme = runtime.NewScheme()
	suite  = &testutil.Suite{Scheme: scheme, Setup: setupControllers, Check: []client.Object{&configv1alpha1.OperatorConfiguration{}, &sunappsv1.Application{}, &webappv1.Guestbook{}}}
	// k8sClient talks to the API server directly.
	k8sClient client.Client
	// level is the log level the holder sets.
	level = zap.NewAtomicLevel()
	// holder is the live settings the suite's reconcilers share.
	holder = settings.NewHolder(defaults, level)
	// restarts records the reasons of the restarts the controller asked for.
	restarts restartLog
)

type restartLog struct {
	mu      sync.Mutex
	reasons []string
}

func (l *restartLog) add(reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reasons = append(l.reasons, reason)
}

func (l *restartLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reasons...)
}

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
	utilruntime.Must(sunappsv1.AddToScheme(scheme))
}

func TestMain(m *testing.M) {
	suite.BeforeRun = func() {
		k8sClient = suite.Client
		// The webhooks the access checks need are registered, as make
		// deploy does, so that the configuration says they run
		// (TestUnenforcedWhenTheWebhooksAreNotRegistered removes them).
		if err := k8sClient.Create(context.Background(), checkingWebhooks()); err != nil {
			panic(err)
		}
	}
	os.Exit(suite.Run(m))
}

// setupControllers registers the configuration controller and the
// reconcilers that read the live settings.
func setupControllers(mgr ctrl.Manager) error {
	recorder := mgr.GetEventRecorder("sunstrider-operator")
	if err := (&OperatorConfigurationReconciler{
		Client: mgr.GetClient(), Recorder: recorder, Settings: holder,
		Defaults: defaults, Started: defaults, Restart: restarts.add,
		Webhooks: &access.Webhooks{Names: access.CheckingWebhooks},
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&webappcontroller.GuestbookReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Settings: holder,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&appscontroller.ApplicationReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Settings: holder,
	}).SetupWithManager(mgr)
}

// newG returns a gomega bound to t with timeouts fit for envtest.
func newG(t *testing.T) *WithT { return testutil.NewG(t) }
