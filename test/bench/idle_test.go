package main

import (
	"strings"
	"testing"
	"time"
)

func TestRequestsOfSumsEveryRequest(t *testing.T) {
	got := requestsOf(map[string]float64{
		`rest_client_requests_total{code="200",host="h",method="GET"}`:   7,
		`rest_client_requests_total{code="201",host="h",method="PATCH"}`: 2,
		`workqueue_adds_total{name="x"}`:                                 40,
	})
	if got != 9 {
		t.Errorf("requestsOf = %v, want 9", got)
	}
}

func TestReconcilesOfCountsEveryResultOfOneController(t *testing.T) {
	got := reconcilesOf(map[string]float64{
		`controller_runtime_reconcile_total{controller="apps-application",result="success"}`:       7,
		`controller_runtime_reconcile_total{controller="apps-application",result="requeue_after"}`: 2,
		`controller_runtime_reconcile_total{controller="apps-application",result="error"}`:         1,
		`controller_runtime_reconcile_total{controller="apps-application-x",result="success"}`:     40,
		`controller_runtime_reconcile_total{controller="example-drink",result="success"}`:          40,
	}, applicationController)
	if got != 10 {
		t.Errorf("reconcilesOf = %v, want 10", got)
	}
}

func TestRenderSteadyCost(t *testing.T) {
	c := steadyCost{apps: 5000, idle: 5 * time.Minute, idleCPU: 1.5, idleRequests: 10, heapPerApp: 10.5 * 1024,
		restartCPU: 40, restartRequests: 12, restartTime: 95 * time.Second}
	out := renderSteadyCost(c)
	want := "| 0.300 | 2.0 | 0 | 10.5 KiB | 95.0 s | 40.0 (8.00) | 12 | met |"
	if !strings.Contains(out, want) {
		t.Errorf("missing %q in\n%s", want, out)
	}
	c.idleWrites, c.restartWrites = 3, 1
	if out := renderSteadyCost(c); !strings.Contains(out, "**missed**: 3 writes idle, 1 after the restart") {
		t.Errorf("writes while idle not judged:\n%s", out)
	}
	if out := renderSteadyCost(steadyCost{}); out != "" {
		t.Errorf("no base, no table; got\n%s", out)
	}
}
