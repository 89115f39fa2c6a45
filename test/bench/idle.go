package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// steadyCost is what the operator costs at scale while nothing changes
// (issue 28, target 4), measured in the steady-rate mode once its base
// Applications have converged: an idle window, then a restart, whose work
// (every Application reconciled once, from the initial list) is a resync's
// plus the list and the cache's fill. controller-runtime's resync is every
// 10 hours; a restart is the one a benchmark can wait for.
type steadyCost struct {
	apps int
	idle time.Duration
	// idleCPU is the operator's CPU-s over the idle window; idleRequests its
	// API requests (rest_client_requests_total); idleWrites the writes among
	// them, and idleReconciles its Application reconciles.
	idleCPU                    float64
	idleRequests               float64
	idleWrites, idleReconciles int
	// heapPerApp is the settled heap over apps, in bytes.
	heapPerApp float64
	// The restart: the new process's CPU-s and API requests from its start
	// until every Application was reconciled and it made no write for 3 s,
	// how long that took, and the writes it made (none are due).
	restartCPU      float64
	restartRequests float64
	restartTime     time.Duration
	restartWrites   int
}

// requestsOf sums rest_client_requests_total in m: every API request of
// the process.
func requestsOf(m map[string]float64) float64 {
	var n float64
	for k, v := range m {
		if strings.HasPrefix(k, "rest_client_requests_total{") {
			n += v
		}
	}
	return n
}

// reconcilesOf is how many reconciles the operator's controller has
// finished, whatever their result (controller_runtime_reconcile_total).
func reconcilesOf(m map[string]float64, controller string) float64 {
	var n float64
	prefix := `controller_runtime_reconcile_total{controller="` + controller + `",`
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// measureSteadyCost measures p, which holds apps converged Applications,
// over an idle window, then restarts it and returns the new process with
// the figures. p is stopped whatever happens.
func (b *bench) measureSteadyCost(ctx context.Context, p *proc, apps int) (steadyCost, *proc, error) {
	cost := steadyCost{apps: apps, idle: b.cfg.steadyIdle}
	writes0, err := quiesce(p)
	if err != nil {
		p.stop()
		return cost, nil, err
	}
	m0, err := p.metrics()
	if err != nil {
		p.stop()
		return cost, nil, err
	}
	cpu0, err := p.cpuSeconds()
	if err != nil {
		p.stop()
		return cost, nil, err
	}
	logf("steady: %s idle with %d converged Applications", cost.idle, apps)
	select {
	case <-ctx.Done():
		p.stop()
		return cost, nil, ctx.Err()
	case <-time.After(cost.idle):
	}
	cpu1, err := p.cpuSeconds()
	if err == nil {
		var m1 map[string]float64
		if m1, err = p.metrics(); err == nil {
			cost.idleCPU = cpu1 - cpu0
			cost.idleRequests = requestsOf(m1) - requestsOf(m0)
			reconciles := `controller_runtime_reconcile_total{controller="` + applicationController + `",result="success"}`
			cost.idleReconciles = int(m1[reconciles] - m0[reconciles])
		}
	}
	if err == nil {
		var w int
		if w, err = p.writes(); err == nil {
			cost.idleWrites = w - writes0
		}
	}
	if err == nil {
		var heap float64
		if heap, err = p.settledHeap(); err == nil && apps > 0 {
			cost.heapPerApp = heap / float64(apps)
		}
	}
	p.stop()
	if err != nil {
		return cost, nil, err
	}

	logf("steady: restarting the operator on %d converged Applications", apps)
	start := time.Now()
	p2, err := b.startOperator(ctx, "steady-restart")
	if err != nil {
		return cost, nil, err
	}
	if _, err := waitReconciles(ctx, p2, applicationController, apps, b.cfg.timeout); err != nil {
		return cost, p2, err
	}
	if cost.restartWrites, err = quiesce(p2); err != nil {
		return cost, p2, err
	}
	cost.restartTime = time.Since(start)
	if cost.restartCPU, err = p2.cpuSeconds(); err != nil {
		return cost, p2, err
	}
	m, err := p2.metrics()
	if err != nil {
		return cost, p2, err
	}
	cost.restartRequests = requestsOf(m)
	logf("steady: idle %.2f CPU-s, %.0f requests, %d writes; restart %s, %.1f CPU-s, %d writes",
		cost.idleCPU, cost.idleRequests, cost.idleWrites, cost.restartTime.Round(time.Second), cost.restartCPU,
		cost.restartWrites)
	return cost, p2, nil
}

// renderSteadyCost tabulates c, with the one verdict it carries: no write
// while idle nor after the restart.
func renderSteadyCost(c steadyCost) string {
	if c.apps == 0 {
		return ""
	}
	minutes := c.idle.Minutes()
	verdict := verdictMet
	if c.idleWrites != 0 || c.restartWrites != 0 {
		verdict = fmt.Sprintf("**missed**: %d writes idle, %d after the restart", c.idleWrites, c.restartWrites)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Steady cost with %d converged Applications, nothing changing: the operator over a %s idle "+
		"window, then restarted (every Application reconciled once from the initial list, a resync's work plus "+
		"the list; controller-runtime resyncs every 10 hours).\n\n", c.apps, c.idle)
	sb.WriteString("| idle CPU-s per minute | idle API requests per minute | idle reconciles | heap per Application " +
		"| restart: reconciled and quiet in | restart CPU-s (per 1,000 Applications) | restart API requests " +
		"| writes idle / after restart = 0 |\n|---:|---:|---:|---:|---:|---:|---:|---|\n")
	fmt.Fprintf(&sb, "| %.3f | %.1f | %d | %.1f KiB | %s | %.1f (%.2f) | %.0f | %s |", c.idleCPU/minutes,
		c.idleRequests/minutes, c.idleReconciles, c.heapPerApp/1024, dur(c.restartTime), c.restartCPU,
		c.restartCPU*1000/float64(c.apps), c.restartRequests, verdict)
	return sb.String()
}
