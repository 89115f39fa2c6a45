package testutil

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LocalCluster prepares a suite that make runs against a local cluster
// (`make <target>`): it reads each tool in tools from the environment
// variable of its name (set, and the file present), checks KUBECONFIG,
// makes a work directory named after prefix and an administrator client
// without client-side rate limit.
func LocalCluster(target, prefix string, scheme *runtime.Scheme, tools map[string]*string) (workDir string, admin client.Client, err error) {
	for name, dst := range tools {
		if *dst = os.Getenv(name); *dst == "" {
			return "", nil, fmt.Errorf("%s is not set: run the suite with `make %s`", name, target)
		}
		if _, err := os.Stat(*dst); err != nil {
			return "", nil, fmt.Errorf("%s=%s: %w (run the suite with `make %s`)", name, *dst, err, target)
		}
	}
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		return "", nil, fmt.Errorf("KUBECONFIG is not set: run the suite with `make %s`", target)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "", nil, err
	}
	cfg.QPS = -1
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return "", nil, err
	}
	if workDir, err = os.MkdirTemp("", prefix); err != nil {
		return "", nil, err
	}
	return workDir, admin, nil
}

// Readyz tells whether the manager serving probes on port is ready: nil
// when /readyz answers 200.
func Readyz(port int) error {
	resp, err := http.Get(fmt.Sprintf("http://localhost:%d/readyz", port))
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

// ScrapeMetrics reads a Prometheus text endpoint (a manager's /metrics
// served over plain HTTP) into a map from series, name and labels as
// written, to value.
func ScrapeMetrics(c *http.Client, url string) (map[string]float64, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", url, line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}
