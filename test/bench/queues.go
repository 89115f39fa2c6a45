package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// What kube-controller-manager's controllers did, by work queue, from its
// own instruments: workqueue_work_duration_seconds (the items each
// controller processed and the seconds it spent on them) since the
// variant's first create. Its CPU seconds (machine.go) say how much it
// worked; this says for which controller and how often, so that a variant
// whose objects make it sync more often is told apart from one whose run
// found it slower per sync (behind on a full namespace, or on a slower
// machine).

const (
	// queueWorkMetric is the histogram of the time each queue's items took.
	queueWorkMetric = "workqueue_work_duration_seconds"
	// kcmCommand is kube-controller-manager's command name as /proc shows
	// it (truncated to 15 characters).
	kcmCommand = "kube-controller"
	// minQueueItemsPerApp hides the queues that processed fewer items per
	// Application than this from the table.
	minQueueItemsPerApp = 0.1
)

// queueReading is the work queues' figures of one scrape, by queue name:
// the items processed and the seconds they took.
type queueReading struct {
	done, seconds map[string]float64
}

// parseQueues reads the work queues' figures of a Prometheus text
// exposition: the count and sum of each queue's queueWorkMetric.
func parseQueues(text string) (queueReading, error) {
	q := queueReading{done: map[string]float64{}, seconds: map[string]float64{}}
	family, err := histogramFamily(text, queueWorkMetric)
	if err != nil {
		return q, err
	}
	for _, m := range family.GetMetric() {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		name := labelsOf(m)["name"]
		q.done[name] += float64(h.GetSampleCount())
		q.seconds[name] += h.GetSampleSum()
	}
	return q, nil
}

// queuesSince is what the queues did between two readings.
func queuesSince(before, after queueReading) queueReading {
	return queueReading{done: requestsSince(before.done, after.done),
		seconds: requestsSince(before.seconds, after.seconds)}
}

// metricsAddress returns the host:port of a control plane component's
// secure port from its command line (/proc/<pid>/cmdline: NUL-separated
// arguments), its --bind-address or 127.0.0.1.
func metricsAddress(cmdline string) (string, error) {
	host, port := "127.0.0.1", ""
	for arg := range strings.SplitSeq(cmdline, "\x00") {
		if v, ok := strings.CutPrefix(arg, "--secure-port="); ok {
			port = v
		}
		if v, ok := strings.CutPrefix(arg, "--bind-address="); ok && v != "0.0.0.0" && v != "::" {
			host = v
		}
	}
	if port == "" || port == "0" {
		return "", errors.New("no --secure-port on its command line")
	}
	return net.JoinHostPort(host, port), nil
}

// kcmMetricsURL finds the running kube-controller-manager and its
// /metrics address.
func kcmMetricsURL() (string, error) {
	for pid, p := range processCPU() {
		if p.name != kcmCommand {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return "", fmt.Errorf("reading kube-controller-manager's command line: %w", err)
		}
		addr, err := metricsAddress(string(cmdline))
		if err != nil {
			return "", fmt.Errorf("kube-controller-manager (pid %d): %w", pid, err)
		}
		return "https://" + addr + "/metrics", nil
	}
	return "", errors.New("no kube-controller-manager process is running")
}

// kcmClient scrapes the bench cluster's kube-controller-manager, which
// serves /metrics without authentication (kwokctl's
// --authorization-always-allow-paths) under a self-signed certificate it
// made at start: there is no CA to verify it against, and the address is
// the local process just found by pid.
var kcmClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see kcmClient
}}

// readQueues scrapes kube-controller-manager's /metrics once.
func readQueues(ctx context.Context) (queueReading, error) {
	url, err := kcmMetricsURL()
	if err != nil {
		return queueReading{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return queueReading{}, err
	}
	resp, err := kcmClient.Do(req)
	if err != nil {
		return queueReading{}, fmt.Errorf("reading kube-controller-manager's /metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return queueReading{}, fmt.Errorf("reading kube-controller-manager's /metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return queueReading{}, fmt.Errorf("kube-controller-manager's /metrics: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	q, err := parseQueues(string(body))
	if err != nil {
		return q, fmt.Errorf("kube-controller-manager's /metrics: %w", err)
	}
	return q, nil
}

// renderQueues tabulates, for each N, the items kube-controller-manager's
// work queues processed per Application and the milliseconds per
// Application it spent on them, for each variant side by side.
func renderQueues(results []result) string {
	var sb strings.Builder
	ns, byN := resultsByN(results, func(r result) bool { return r.queues.done != nil })
	for _, n := range ns {
		rs := byN[n]
		queues := map[string]bool{}
		for _, r := range rs {
			for q, v := range r.queues.done {
				if v/float64(n) >= minQueueItemsPerApp {
					queues[q] = true
				}
			}
		}
		last := rs[len(rs)-1]
		order := slices.SortedFunc(maps.Keys(queues), func(a, b string) int {
			if c := cmp.Compare(last.queues.seconds[b], last.queues.seconds[a]); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		fmt.Fprintf(&sb, "kube-controller-manager's work queues, first create to convergence (N=%d): items "+
			"processed per Application / ms per Application spent on them (its clock: waits on the API server and "+
			"for a CPU included):\n\n", n)
		writeVariantColumns(&sb, "queue", rs)
		for _, q := range order {
			fmt.Fprintf(&sb, "| %s |", q)
			for _, r := range rs {
				fmt.Fprintf(&sb, " %.2f / %.1f |", r.queues.done[q]/float64(n), 1000*r.queues.seconds[q]/float64(n))
			}
			sb.WriteString("\n")
		}
		sb.WriteString("\n")
	}
	return strings.TrimSuffix(sb.String(), "\n\n")
}
