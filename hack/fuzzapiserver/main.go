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

// Command fuzzapiserver runs a command (`make test`: go test) beside one
// envtest control plane that the fuzz oracles (testutil.FuzzAPIServer) of
// every package share, instead of each package's test process starting
// its own: it starts the control plane while the command runs (go test
// is still building), describes it in a file named by
// FUZZ_APISERVER_FILE in the command's environment, which the oracles wait
// for, and stops it once the command has ended. It exits with the
// command's code.
//
//	KUBEBUILDER_ASSETS=bin/k8s/<version> fuzzapiserver go test ./...
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"sunstrider.cn/operator/internal/testutil"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fuzzapiserver command [argument...]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(name string, args []string) int {
	dir, err := os.MkdirTemp("", "fuzz-apiserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fuzzapiserver:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "apiserver.json")

	// An interrupt reaches the command too (same process group): the
	// control plane is stopped once the command has ended. A termination
	// sent to this process alone is passed on.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)

	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), testutil.FuzzAPIServerFileEnv+"="+path)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fuzzapiserver:", err)
		return 1
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()

	started := make(chan func(), 1)
	go func() { started <- startControlPlane(path) }()

	var waitErr error
	for done := false; !done; {
		select {
		case waitErr = <-ended:
			done = true
		case sig := <-signals:
			if sig == syscall.SIGTERM {
				_ = cmd.Process.Signal(sig)
			}
		}
	}
	(<-started)()

	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		return exit.ExitCode()
	case waitErr != nil:
		fmt.Fprintln(os.Stderr, "fuzzapiserver:", waitErr)
		return 1
	}
	return 0
}

// startControlPlane starts the control plane and writes its description
// (or why it did not start) to path, in one rename so that a reader never
// sees half of it. It returns what stops it.
func startControlPlane(path string) func() {
	env, data, err := testutil.StartFuzzControlPlane()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fuzzapiserver: starting the control plane:", err)
		data = testutil.FuzzControlPlaneError(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "fuzzapiserver:", err)
	} else if err := os.Rename(tmp, path); err != nil {
		fmt.Fprintln(os.Stderr, "fuzzapiserver:", err)
	}
	return func() {
		if env == nil {
			return
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "fuzzapiserver: stopping the control plane:", err)
		}
	}
}
