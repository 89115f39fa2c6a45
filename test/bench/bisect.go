package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// The rate this machine sustains (issue 28, target 3): the steady-rate
// mode's -bisect lo,hi,steps finds, by bisection between lo and hi creates
// per second, the highest rate at which the Application floor (the
// Application API's own writes, no controller) shows no backlog over the
// rate window, then measures the operator's creates at that rate on the
// same cluster: its p99 create→Ready must stay within the Application
// floor's p99 at that rate + 1 s.

// bisectSpec is -bisect: the rates bracketing the search and how many
// probes between them.
type bisectSpec struct {
	lo, hi float64
	steps  int
}

func parseBisect(s string) (bisectSpec, error) {
	if s == "" {
		return bisectSpec{}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return bisectSpec{}, fmt.Errorf("-bisect %q: want lo,hi,steps", s)
	}
	lo, err1 := strconv.ParseFloat(parts[0], 64)
	hi, err2 := strconv.ParseFloat(parts[1], 64)
	steps, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || lo <= 0 || hi <= lo || steps < 0 {
		return bisectSpec{}, fmt.Errorf("-bisect %q: want 0 < lo < hi creates per second and steps ≥ 0", s)
	}
	return bisectSpec{lo: lo, hi: hi, steps: steps}, nil
}

// probe is one rate tried and what the Application floor did at it.
type probe struct {
	rate    float64
	p99     time.Duration
	backlog bool
	// overload is the API server's answer when it timed out or turned
	// away requests at this rate (backlog then).
	overload error
}

// bisectRate returns the highest rate of those probed that sustains: lo
// first (none sustains when it does not), then hi (the answer when it
// sustains), then steps midpoints, each rounded to 0.1/s. measure probes
// one rate.
func bisectRate(spec bisectSpec, measure func(rate float64) (probe, error)) (float64, []probe, error) {
	var probes []probe
	try := func(rate float64) (bool, error) {
		p, err := measure(rate)
		if err != nil {
			return false, err
		}
		probes = append(probes, p)
		return !p.backlog, nil
	}
	ok, err := try(spec.lo)
	if err != nil || !ok {
		return 0, probes, err
	}
	if ok, err = try(spec.hi); err != nil || ok {
		return spec.hi, probes, err
	}
	lo, hi := spec.lo, spec.hi
	for range spec.steps {
		mid := math.Round((lo+hi)/2*10) / 10
		if mid <= lo || mid >= hi {
			break
		}
		ok, err := try(mid)
		if err != nil {
			return lo, probes, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, probes, nil
}

// overloaded tells whether err is the API server's answer when it cannot
// keep up: a request timed out (504), or it turned the request away (429).
func overloaded(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
}

// bisectResult is the rate found and the operator's creates at it.
type bisectResult struct {
	spec   bisectSpec
	rate   float64
	probes []probe
	// appFloor is the Application floor's p99 at rate (its probe);
	// operator the operator's, opBacklog whether it backlogged, and busy
	// why the operator's run compares with nothing.
	appFloor, operator time.Duration
	opBacklog          bool
	busy               []string
}

// runBisect bisects the Application floor's rates (the operator stopped and
// its webhooks removed, as steadyAppFloor needs), then starts the operator
// with its webhooks and measures its creates at the rate found.
func (b *bench) runBisect(ctx context.Context, spec bisectSpec) (bisectResult, error) {
	res := bisectResult{spec: spec}
	if err := b.installWithoutWebhooks(ctx); err != nil {
		return res, err
	}
	window := b.cfg.rateWindow
	rate, probes, err := bisectRate(spec, func(rate float64) (probe, error) {
		r := steadyResult{rate: rate, items: int(math.Ceil(rate * window.Seconds()))}
		if err := b.steadyAppFloor(ctx, &r, false); err != nil {
			if !overloaded(err) || ctx.Err() != nil {
				return probe{}, err
			}
			// Far above what the machine sustains, the API server times
			// requests out: the rate is not sustained, and the search goes on
			// below it.
			logf("bisect %g/s: the API server could not keep up (%v): not sustained", rate, err)
			if err := deleteNamespace(ctx, b.c, appFloorNamespace(rate)); err != nil {
				return probe{}, err
			}
			return probe{rate: rate, backlog: true, overload: err}, nil
		}
		if len(r.busy) > 0 {
			logf("bisect %g/s: %s (the probe counts anyway: a busy start lengthens, never shortens, latencies)",
				rate, strings.Join(r.busy, "; "))
		}
		af := r.appFloor.creates
		logf("bisect %g/s: Application floor p99 %s, backlog %v", rate, dur(af.p99), r.appFloor.backlog)
		return probe{rate: rate, p99: af.p99, backlog: r.appFloor.backlog}, nil
	})
	res.rate, res.probes = rate, probes
	if err != nil || rate == 0 {
		return res, err
	}
	for _, p := range probes {
		if p.rate == rate {
			res.appFloor = p.p99
		}
	}
	logf("bisect: the Application floor sustains %g/s; the operator at that rate", rate)
	if err := b.installOperatorConfig(ctx); err != nil {
		return res, err
	}
	p, err := b.startOperator(ctx, "bisect")
	if err != nil {
		return res, err
	}
	defer p.stop()
	ns := "bench-bisect-op-" + rateName(rate)
	if err := createNamespace(ctx, b.c, ns); err != nil {
		return res, err
	}
	r := steadyResult{rate: rate, items: int(math.Ceil(rate * window.Seconds()))}
	if busy := b.settle(ctx, fmt.Sprintf("bisect %g/s operator", rate), r.items); busy != "" {
		res.busy = append(res.busy, busy)
	}
	t, err := b.openLoopPhase(ctx, &r, r.items, ns, "Applications (operator)", &sunappsv1.ApplicationList{},
		applicationReady(true), nil, func(ctx context.Context, i int) error {
			return b.c.Create(ctx, newApplication(ns, itemName(i)))
		})
	if err != nil {
		return res, err
	}
	res.operator = summarizeLatencies(t.latencies()).p99
	res.opBacklog = backlogged(t.createdInOrder(r.items))
	logf("bisect %g/s: operator p99 %s, Application floor p99 %s", rate, dur(res.operator), dur(res.appFloor))
	return res, deleteNamespace(ctx, b.c, ns)
}

// renderBisect prints the probes, the rate found and the operator's
// verdict at it.
func renderBisect(r bisectResult) string {
	if len(r.probes) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "The rate this machine sustains: the Application floor's creates (no controller), open-loop, "+
		"bisected between %g/s and %g/s; a rate sustains when create→Ready does not grow over the window.\n\n",
		r.spec.lo, r.spec.hi)
	sb.WriteString("| rate | Application floor p99 | backlog |\n|---:|---:|---|\n")
	for _, p := range r.probes {
		p99, backlog := dur(p.p99), map[bool]string{true: "yes", false: "no"}[p.backlog]
		if p.overload != nil {
			p99, backlog = "-", "yes: the API server timed requests out"
		}
		fmt.Fprintf(&sb, "| %g/s | %s | %s |\n", p.rate, p99, backlog)
	}
	if r.rate == 0 {
		fmt.Fprintf(&sb, "\nNo rate sustains: the Application floor backlogs at %g/s already.", r.spec.lo)
		return sb.String()
	}
	limit := r.appFloor + time.Second
	verdict := verdictMet
	switch {
	case len(r.busy) > 0:
		verdict = "no verdict: " + strings.Join(r.busy, "; ")
	case r.operator == 0:
		verdict = notMeasured
	case r.operator > limit:
		verdict = fmt.Sprintf("**missed** by %s", dur(r.operator-limit))
	}
	fmt.Fprintf(&sb, "\nSustained: **%g/s**. The operator at %g/s: p99 create→Ready %s%s, against the Application "+
		"floor's %s + 1 s: %s.", r.rate, r.rate, dur(r.operator), backlogMark(r.opBacklog), dur(r.appFloor), verdict)
	if r.rate == r.spec.hi {
		fmt.Fprintf(&sb, " The Application floor sustained the top of the range: the rate it sustains is %g/s or "+
			"more, not bracketed (raise hi).", r.spec.hi)
	}
	return sb.String()
}
