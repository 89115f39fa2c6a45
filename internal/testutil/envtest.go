// Package testutil starts the real control plane the tests run against and
// offers small helpers shared by the envtest suites.
package testutil

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// RepoRoot returns the directory holding the operator's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(data), "module sunstrider.cn/operator\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of sunstrider.cn/operator) not found")
		}
		dir = parent
	}
}

// BinaryDir returns the folder holding kube-apiserver, etcd and kubectl:
// KUBEBUILDER_ASSETS when set, otherwise bin/k8s/<version> as built by
// `make k8s-test-bins`. A missing binary is an error, never a skip.
func BinaryDir(root string) (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		version, err := kubernetesVersion(root)
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s", version)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("control-plane binary %s missing in %s (run `make k8s-test-bins`): %w", name, dir, err)
		}
	}
	return dir, nil
}

func kubernetesVersion(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "hack", "k8s", "go.mod"))
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		for i := 0; i+1 < len(fields); i++ {
			if fields[i] == "k8s.io/kubernetes" {
				return fields[i+1], nil
			}
		}
	}
	return "", errors.New("hack/k8s/go.mod does not require k8s.io/kubernetes")
}

// NewEnvironment returns an envtest environment with the project's generated
// CRDs, ready to Start.
func NewEnvironment() (*envtest.Environment, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	bin, err := BinaryDir(root)
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: bin,
		// envtest's default, 20 s for each of etcd and kube-apiserver, is
		// short for a machine whose two cores also run other suites' control
		// planes (a CI run saw kube-apiserver time out at start); a healthy
		// start takes a few seconds, and only a failing one waits longer.
		ControlPlaneStartTimeout: time.Minute,
	}, nil
}

// Start starts env and returns its rest config.
func Start(env *envtest.Environment) (*rest.Config, error) {
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest control plane: %w", err)
	}
	// The tests create many objects quickly; client-side throttling would
	// only slow them down.
	cfg.QPS = -1
	return cfg, nil
}
