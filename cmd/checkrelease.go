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
	"flag"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"sunstrider.cn/operator/internal/releasecheck"
)

// checkReleaseCommand is the subcommand of the chart's `helm test` hook.
const checkReleaseCommand = "check-release"

// runCheckRelease is `manager check-release`: it proves through the API
// server that the operator's webhooks are served by a running manager
// whose certificate the API server trusts (internal/releasecheck), and
// exits 0, or 1 saying which check failed and why.
func runCheckRelease(args []string) int {
	fs := flag.NewFlagSet(checkReleaseCommand, flag.ContinueOnError)
	namespace := fs.String("namespace", os.Getenv("POD_NAMESPACE"),
		"Namespace the dry-run probes are made in, where the caller may create Applications and Drinks "+
			"(env POD_NAMESPACE).")
	kubeconfig := fs.String("kubeconfig", "", "Path to a kubeconfig; empty: $KUBECONFIG or the in-cluster configuration.")
	timeout := fs.Duration("timeout", time.Minute,
		"How long to retry while the API server cannot call the webhooks (no ready manager, CA not injected yet).")
	// A failure's message is what the hook's log is read for, not a stack.
	zapOpts := zap.Options{StacktraceLevel: zapcore.PanicLevel}
	zapOpts.BindFlags(fs)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage: %s %s [flags]\n"+
			"Proves the operator's webhooks answer through the API server: dry-run creates of an Application\n"+
			"and a v1alpha1 Drink that only the webhooks refuse, each with its expected refusal. Stores nothing.\n"+
			"The caller needs, in the namespace: %s.\n", os.Args[0], checkReleaseCommand, releasecheck.RulesText())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName(checkReleaseCommand)
	c, err := checkReleaseClient(*kubeconfig)
	if err == nil {
		err = releasecheck.Run(ctrl.SetupSignalHandler(), c,
			releasecheck.Options{Namespace: *namespace, Timeout: *timeout}, log)
	}
	if err != nil {
		log.Error(err, "Release check failed")
		return 1
	}
	log.Info("Release check passed: the API server called the operator's mutating, validating and conversion webhooks",
		"namespace", *namespace)
	return 0
}

// checkReleaseRequestTimeout bounds each request: the API server answers
// within the webhooks' timeoutSeconds (at most 30 s each) when it cannot
// call them.
const checkReleaseRequestTimeout = 30 * time.Second

// checkReleaseClient is a client from kubeconfig, $KUBECONFIG or the
// in-cluster configuration, each request bounded by
// checkReleaseRequestTimeout. It drops the API server's warnings: the
// Drink probe writes the deprecated v1alpha1 on purpose.
func checkReleaseClient(kubeconfig string) (client.Client, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.Timeout = checkReleaseRequestTimeout
	cfg.WarningHandler = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return c, nil
}
