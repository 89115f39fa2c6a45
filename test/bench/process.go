package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sunstrider.cn/operator/internal/testutil"
)

// proc is a controller process (the operator, or the seed reference in a
// child process of this binary) with plain-HTTP metrics, probes and pprof.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	ports   ports
}

type ports struct{ metrics, probe, pprof, webhook int }

func startProc(name, logPath string, p ports, env []string, argv ...string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	pr := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{}), ports: p}
	go func() { _ = cmd.Wait(); _ = f.Close(); close(pr.exited) }()
	return pr, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// waitReady polls /readyz until it answers 200.
func (p *proc) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", p.ports.probe)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited; log %s:\n%s", p.name, p.logPath, tail(p.logPath, 30))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s; log %s:\n%s", p.name, timeout, p.logPath, tail(p.logPath, 30))
}

// stop sends SIGTERM and waits for the process to end.
func (p *proc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// metrics scrapes the Prometheus text endpoint: sample line (name with
// labels, as printed) -> value.
func (p *proc) metrics() (map[string]float64, error) {
	return testutil.ScrapeMetrics(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/metrics", p.ports.metrics))
}

// writes is the number of mutating requests the process has sent
// (rest_client_requests_total with method POST, PUT, PATCH or DELETE).
func (p *proc) writes() (int, error) {
	m, err := p.metrics()
	if err != nil {
		return 0, err
	}
	n := 0.0
	for k, v := range m {
		if !strings.HasPrefix(k, "rest_client_requests_total{") {
			continue
		}
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if strings.Contains(k, `method="`+method+`"`) {
				n += v
			}
		}
	}
	return int(n), nil
}

// settledHeap forces a garbage collection (pprof's heap handler with gc=1)
// and returns the live heap: go_memstats_heap_alloc_bytes right after it.
func (p *proc) settledHeap() (float64, error) {
	var last float64
	// Two collections: finalizers and sync.Pool caches are released by the second.
	for range 2 {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", p.ports.pprof))
		if err != nil {
			return 0, fmt.Errorf("forcing a GC through pprof: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	m, err := p.metrics()
	if err != nil {
		return 0, err
	}
	last, ok := m["go_memstats_heap_alloc_bytes"]
	if !ok {
		return 0, errors.New("no go_memstats_heap_alloc_bytes in the metrics")
	}
	return last, nil
}

// saveProfile writes the pprof profile name (e.g. heap) to path.
func (p *proc) saveProfile(name, path string) error {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", p.ports.pprof, name))
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// peakRSS is VmHWM from /proc/<pid>/status, in bytes.
func (p *proc) peakRSS() (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseFloat(f[0], 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmHWM")
}

// cpuSeconds is user+system CPU time from /proc/<pid>/stat.
func (p *proc) cpuSeconds() (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid()))
	if err != nil {
		return 0, err
	}
	_, cpu, ok := parseProcStat(string(data))
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", p.pid())
	}
	return cpu, nil
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
