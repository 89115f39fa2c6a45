package main

import (
	"testing"
	"time"
)

func TestRenderCurveMarksTheOperatorsCostsOffTheCurve(t *testing.T) {
	op := func(n int, converge time.Duration, heap float64) result {
		r := na()
		r.variant, r.n, r.converge, r.heapPerApp, r.cpu, r.machineBusy = "operator", n, converge, heap, 0.5*float64(n)/100, -1
		r.requests = map[string]float64{"POST applications": float64(n), "PATCH deployments": float64(n)}
		r.restartReady, r.restartReconciled, r.restartWrites = 2*time.Second, 3*time.Second, 0
		return r
	}
	floor := na()
	floor.variant, floor.n, floor.converge = "floor (plain client)", 1000, 20*time.Second
	out := renderCurve([]result{
		op(1000, 40*time.Second, 15*1024),
		floor,
		op(10000, 600*time.Second, 16*1024), // convergence per Application 1.5 times N=1000's
	})
	containsAll(t, "the curve", out,
		"| operator | 1000 | 40.0 ms | 2.0 | - | 5.00 | 15.0 KiB | - | 2000 ms | 3000 ms | 0 |",
		"| operator | 10000 | **60.0 ms** | 2.0 | - | 5.00 | 16.0 KiB |",
		"| floor (plain client) | 1000 | 20.0 ms | - | - | - | - | - | - | - | - |",
	)
	if renderCurve([]result{op(1000, time.Second, 1)}) != "" {
		t.Error("a curve of one N")
	}
}
