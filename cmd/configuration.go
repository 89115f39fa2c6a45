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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/access"
	configcontroller "sunstrider.cn/operator/internal/controller/config"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/settings"
)

// initConfigCommand is the subcommand of the operator's init container.
const initConfigCommand = "init-config"

// liveLevel makes the logger's level an AtomicLevel that the
// OperatorConfiguration can change, starting at --zap-log-level's.
func liveLevel(o *zap.Options) uberzap.AtomicLevel {
	start := zapcore.InfoLevel
	if o.Development {
		start = zapcore.DebugLevel
	}
	if l, ok := o.Level.(interface{ Level() zapcore.Level }); ok {
		start = l.Level()
	}
	level := uberzap.NewAtomicLevelAt(start)
	o.Level = level
	return level
}

// liveConfig is what the manager runs with: the settings in effect, the
// flags' defaults and how to restart.
type liveConfig struct {
	holder            *settings.Holder
	defaults, started settings.Settings
	// restart stops the manager for its Deployment to start it again.
	restart func(reason string)
	// restarting is closed by restart.
	restarting chan struct{}
	// webhooks says whether the access checks run: run sets NotServed
	// before the manager starts, the OperatorConfiguration controller
	// reads it (and the registrations) at each reconcile.
	webhooks access.Webhooks
}

// loadConfiguration reads the OperatorConfiguration the operator starts
// with. Its flags are the defaults of every field it leaves unset.
func loadConfiguration(ctx context.Context, cfg *rest.Config, o *options, level uberzap.AtomicLevel,
	cancel context.CancelFunc) (*liveConfig, error) {
	defaults := settings.Settings{
		GuestbookImage:          o.guestbookImage,
		GuestbookResources:      settings.DefaultGuestbookResources(),
		ConflictRecheckInterval: settings.DefaultConflictRecheckInterval,
		LogLevel:                settings.LevelName(level.Level()),
		ChildAccess:             settings.DefaultChildAccess,
		Controllers:             settings.AllControllers,
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	started, found, err := configcontroller.Startup(ctx, c, &defaults)
	if err != nil {
		return nil, err
	}
	if !found {
		setupLog.Info("No OperatorConfiguration: running with the flags and built-in defaults",
			"name", configv1alpha1.ConfigurationName)
	}
	lc := &liveConfig{
		holder: settings.NewHolder(started, level), defaults: defaults, started: started,
		restarting: make(chan struct{}),
		webhooks:   access.Webhooks{Names: access.CheckingWebhooks},
	}
	lc.restart = func(reason string) {
		select {
		case <-lc.restarting:
			return
		default:
		}
		setupLog.Info("Restarting to apply the OperatorConfiguration", "reason", reason)
		close(lc.restarting)
		cancel()
	}
	setupLog.Info("Configuration", "guestbookImage", started.GuestbookImage,
		"conflictRecheckInterval", started.ConflictRecheckInterval, "logLevel", started.LogLevel,
		"childAccess", started.ChildAccess, "controllers", started.Controllers, "watchNamespaces", started.WatchNamespaces)
	return lc, nil
}

// cacheOptions restricts the cache to watchNamespaces when they are set.
// Cluster-scoped objects (Guestbooks, Namespaces, the configuration) are
// cached whatever the namespaces.
func (lc *liveConfig) cacheOptions() cache.Options {
	opts := machinery.CacheOptions(webappv1.LabelGuestbook)
	if ns := lc.started.WatchNamespaces; len(ns) > 0 {
		opts.DefaultNamespaces = make(map[string]cache.Config, len(ns))
		for _, n := range ns {
			opts.DefaultNamespaces[n] = cache.Config{}
		}
	}
	return opts
}

// setupConfigurationController registers the OperatorConfiguration
// controller, unless its CRD is not installed (an operator upgraded before
// its CRDs): it then runs on its flags and says so.
func setupConfigurationController(mgr ctrl.Manager, lc *liveConfig) error {
	gk := configv1alpha1.GroupVersion.WithKind("OperatorConfiguration").GroupKind()
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, configv1alpha1.GroupVersion.Version); meta.IsNoMatchError(err) {
		setupLog.Info("The OperatorConfiguration CRD is not installed: running with the flags and built-in " +
			"defaults (make install or the chart's CRDs install it)")
		return nil
	} else if err != nil {
		return fmt.Errorf("looking up the OperatorConfiguration kind: %w", err)
	}
	return (&configcontroller.OperatorConfigurationReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("sunstrider-operator"),
		Settings: lc.holder,
		Defaults: lc.defaults,
		Started:  lc.started,
		Elected:  mgr.Elected(),
		Restart:  lc.restart,
		Webhooks: &lc.webhooks,
	}).SetupWithManager(mgr)
}

// runInitConfig is `manager init-config`: it creates the
// OperatorConfiguration named default from --from-file (or with an empty
// spec) unless one exists, which it never changes. Every replica runs it at
// every start; it needs create permission only. A spec the API server
// refuses fails the init container, so a rollout with bad Helm values stops
// before the running operator is replaced.
func runInitConfig(args []string) int {
	fs := flag.NewFlagSet(initConfigCommand, flag.ContinueOnError)
	from := fs.String("from-file", "",
		"YAML file holding the initial OperatorConfiguration (apiVersion, kind, metadata.name default, spec); "+
			"empty: an empty spec, every field from the manager's flags.")
	kubeconfig := fs.String("kubeconfig", "", "Path to a kubeconfig; empty: $KUBECONFIG or the in-cluster configuration.")
	timeout := fs.Duration("timeout", time.Minute,
		"How long to retry while the API server or the CRD is not there yet.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage: %s %s [flags]\n"+
			"Creates the OperatorConfiguration %q when it does not exist; never changes an existing one.\n",
			os.Args[0], initConfigCommand, configv1alpha1.ConfigurationName)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName(initConfigCommand)
	if err := initConfig(*from, *kubeconfig, *timeout); err != nil {
		log.Error(err, "Creating the initial OperatorConfiguration failed")
		return 1
	}
	return 0
}

func initConfig(from, kubeconfig string, timeout time.Duration) error {
	log := ctrl.Log.WithName(initConfigCommand)
	cfg, err := settings.Initial(from)
	if err != nil {
		return err
	}
	if kubeconfig != "" {
		if err := os.Setenv("KUBECONFIG", kubeconfig); err != nil {
			return err
		}
	}
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctrl.SetupSignalHandler(), timeout)
	defer cancel()
	var created bool
	err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		created, err = settings.CreateIfAbsent(ctx, c, cfg.DeepCopy())
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsBadRequest(err):
			return false, err
		}
		// The CRD not yet established, the API server not yet reachable.
		log.Info("Retrying", "error", err.Error())
		return false, nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the API server did not accept the OperatorConfiguration within %s", timeout)
	}
	if err != nil {
		return err
	}
	if created {
		log.Info("Created the OperatorConfiguration", "name", cfg.Name, "from", from)
	} else {
		log.Info("The OperatorConfiguration exists and is left as it is", "name", cfg.Name)
	}
	return nil
}

// atomicLevel is the logger's level that the OperatorConfiguration sets.
type atomicLevel = uberzap.AtomicLevel
