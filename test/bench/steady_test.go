package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestBacklogged(t *testing.T) {
	s := func(v ...float64) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x * float64(time.Second))
		}
		return out
	}
	for _, c := range []struct {
		name string
		in   []time.Duration
		want bool
	}{
		{"flat", s(1, 1.1, 0.9, 1, 1, 1.2, 1, 0.9, 1.1, 1), false},
		{"growing", s(1, 1, 2, 3, 4, 5, 6, 7, 8, 9), true},
		{"noisy but under a second more", s(0.2, 0.2, 0.5, 0.9, 1, 0.4, 0.3, 0.2, 1.1, 1.1), false},
		{"too few to tell", s(1, 9, 20), false},
	} {
		if got := backlogged(c.in); got != c.want {
			t.Errorf("%s: backlogged = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestOpenLoopDoesNotWaitForSlowCalls(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- openLoop(context.Background(), 1000, 20, func(context.Context, int) error {
			started.Add(1)
			<-release // every call blocks until all have started
			return nil
		})
	}()
	for started.Load() < 20 {
		select {
		case err := <-done:
			t.Fatalf("openLoop returned before every call ran: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRenderSteadyJudgesTheTarget(t *testing.T) {
	l := func(p99 time.Duration) latencies { return latencies{p99 / 2, p99, p99} }
	out := renderSteady([]steadyResult{
		{rate: 5, items: 300, operator: l(3 * time.Second), floor: l(2500 * time.Millisecond),
			change:      specChange{deployment: l(100 * time.Millisecond), rolledOut: l(time.Second), ready: l(2 * time.Second)},
			floorUpdate: l(800 * time.Millisecond)},
		{rate: 20, items: 1200, operator: l(5 * time.Second), floor: l(2 * time.Second)},
		{rate: 50, items: 3000, operator: l(50 * time.Second), floor: l(40 * time.Second), flBacklog: true},
		{rate: 7, items: 420, operator: l(1195*time.Millisecond + 300*time.Microsecond), floor: l(195 * time.Millisecond)},
		{rate: 9, items: 540, operator: l(9 * time.Second), floor: l(time.Second),
			busy: []string{"machine still 99 % busy after 10m0s"}},
	}, 5000, time.Minute)
	containsAll(t, "the table", out,
		"| 5/s | 300 | 1500 ms / 3000 ms / 3000 ms | 1250 ms / 2500 ms / 2500 ms | met |",
		"| 20/s | 1200 | 2500 ms / 5000 ms / 5000 ms | 1000 ms / 2000 ms / 2000 ms | **missed** by 2000 ms |",
		"(backlog) | floor backlogged: not applicable |",
		"| 98 ms / 195 ms / 195 ms | **missed** by 0.30 ms |",
		"| 9/s | 540 | 4500 ms / 9000 ms / 9000 ms | 500 ms / 1000 ms / 1000 ms | "+
			"no verdict: machine still 99 % busy after 10m0s |",
		"| 5/s | 50 ms / 100 ms / 100 ms | 500 ms / 1000 ms / 1000 ms | 1000 ms / 2000 ms / 2000 ms | "+
			"400 ms / 800 ms / 800 ms |",
	)
}

func TestRenderSteadyAddsTheApplicationFloorWhenItRan(t *testing.T) {
	l := func(p99 time.Duration) latencies { return latencies{p99 / 2, p99, p99} }
	out := renderSteady([]steadyResult{
		{rate: 5, items: 300, operator: l(time.Second), floor: l(200 * time.Millisecond),
			appFloor: &appFloorAtRate{creates: l(400 * time.Millisecond), change: new(l(600 * time.Millisecond))},
			change:   specChange{ready: l(900 * time.Millisecond)}},
		{rate: 10, items: 600, operator: l(20 * time.Second), floor: l(2 * time.Second), opBacklog: true,
			appFloor: &appFloorAtRate{creates: l(9 * time.Second), backlog: true}},
		{rate: 20, items: 1200, operator: l(time.Second), floor: l(time.Second)},
	}, 5000, time.Minute)
	containsAll(t, "the table", out,
		"| floor p50 / p90 / p99 | Application floor p50 / p90 / p99 | operator p99 ≤ floor p99 + 1 s |",
		"|---:|---:|---:|---:|---:|---|",
		"| 5/s | 300 | 500 ms / 1000 ms / 1000 ms | 100 ms / 200 ms / 200 ms | 200 ms / 400 ms / 400 ms | met |",
		"| 4500 ms / 9000 ms / 9000 ms (backlog) | **missed** by 17.0 s |",
		"| 20/s | 1200 | 500 ms / 1000 ms / 1000 ms | 500 ms / 1000 ms / 1000 ms | - | met |",
		"| floor: Deployment update → rolled out | Application floor: update → Ready |\n|---:|---:|---:|---:|---:|---:|",
		"| 450 ms / 900 ms / 900 ms | 0 ms / 0 ms / 0 ms | 300 ms / 600 ms / 600 ms |",
		"| 10/s | 0 ms / 0 ms / 0 ms | 0 ms / 0 ms / 0 ms | 0 ms / 0 ms / 0 ms | 0 ms / 0 ms / 0 ms | - |",
	)
	without := renderSteady([]steadyResult{{rate: 5, items: 300}}, 5000, time.Minute)
	if strings.Contains(without, "Application floor") {
		t.Errorf("a run without the Application floor has its column:\n%s", without)
	}
}

func TestRenderSteadyAddsTheOperatorWithWebhooksOffWhenItRan(t *testing.T) {
	l := func(p99 time.Duration) latencies { return latencies{p99 / 2, p99, p99} }
	out := renderSteady([]steadyResult{
		{rate: 5, items: 300, operator: l(time.Second), floor: l(200 * time.Millisecond),
			change: specChange{ready: l(900 * time.Millisecond)}, floorUpdate: l(300 * time.Millisecond),
			noWebhooks: &withoutWebhooks{creates: l(600 * time.Millisecond),
				change: specChange{deployment: l(80 * time.Millisecond), ready: l(700 * time.Millisecond)}}},
		{rate: 10, items: 600, operator: l(2 * time.Second), floor: l(time.Second),
			noWebhooks: &withoutWebhooks{creates: l(1500 * time.Millisecond), backlog: true,
				busy: "machine still 99 % busy after 10m0s"}},
		{rate: 20, items: 1200, operator: l(time.Second), floor: l(time.Second)},
	}, 5000, time.Minute)
	containsAll(t, "the table", out,
		"| floor p50 / p90 / p99 | operator, webhooks off p50 / p90 / p99 | operator p99 ≤ floor p99 + 1 s |",
		"|---:|---:|---:|---:|---:|---|",
		"| 5/s | 300 | 500 ms / 1000 ms / 1000 ms | 100 ms / 200 ms / 200 ms | 300 ms / 600 ms / 600 ms | met |",
		"| 750 ms / 1500 ms / 1500 ms (backlog) (machine still 99 % busy after 10m0s) | met |",
		"| 20/s | 1200 | 500 ms / 1000 ms / 1000 ms | 500 ms / 1000 ms / 1000 ms | - | met |",
		"| floor: Deployment update → rolled out | webhooks off: → Deployment updated | webhooks off: → Ready |",
		"|---:|---:|---:|---:|---:|---:|---:|",
		"| 150 ms / 300 ms / 300 ms | 40 ms / 80 ms / 80 ms | 350 ms / 700 ms / 700 ms |",
		"| 20/s | 0 ms / 0 ms / 0 ms | 0 ms / 0 ms / 0 ms | 0 ms / 0 ms / 0 ms | 0 ms / 0 ms / 0 ms | - | - |",
	)
	without := renderSteady([]steadyResult{{rate: 5, items: 300}}, 5000, time.Minute)
	if strings.Contains(without, "webhooks off") {
		t.Errorf("a run without the operator with webhooks off has its columns:\n%s", without)
	}
}

func TestRenderSteadyShowsWhereCreatesWent(t *testing.T) {
	op := stageSummary{variant: "operator at 5/s", n: 300}
	op.seen[stageReady] = 300
	op.step[stageReady].p50, op.step[stageReady].p99, op.step[stageReady].since =
		60*time.Millisecond, 900*time.Millisecond, 150*time.Millisecond
	fl := stageSummary{variant: "floor at 5/s", n: 300}
	out := renderSteady([]steadyResult{{rate: 5, items: 300, stages: []stageSummary{op, fl}}}, 5000, time.Minute)
	containsAll(t, "the table", out,
		"| stage | operator at 5/s N=300 | floor at 5/s N=300 |",
		"| Application Ready written (the controller's reconcile of the Deployment's status) | 60 ms / 900 ms (150 ms) | - |",
	)
}

func TestRenderSteadyShowsWhereTheCPUWent(t *testing.T) {
	out := renderSteady([]steadyResult{{rate: 5, items: 300, cpu: []phaseCPU{
		{phase: "Applications (operator)", wall: 60 * time.Second, share: 0.91, processes: map[string]float64{
			"kube-apiserver": 60.6, "etcd": 15.6, "manager": 9.3, "containerd": 1.2, "sshd": 0.6}},
		{phase: "floor Deployments and Services", wall: 0},
		{phase: "Application spec changes", wall: time.Second, share: 0.5, processes: map[string]float64{
			"kube-apiserver": 0.7, "etcd": 0.1, "manager": 0.2}},
	}}}, 5000, time.Minute)
	containsAll(t, "the table", out,
		"| rate | phase | seconds | machine busy | kube-apiserver | etcd | kube-controller | kube-scheduler | "+
			"kwok-controller | manager | bench | other |",
		"| 5/s | Applications (operator) | 60 | 91 % | 1.01 | 0.26 | - | - | - | 0.15 | - | 0.03 |",
		"| 5/s | Application spec changes | 1 | 50 % | 0.70 | 0.10 | - | - | - | 0.20 | - | 0.00 |",
	)
	if strings.Contains(out, "-0.00") {
		t.Errorf("other, with no other process, is printed negative:\n%s", out)
	}
	if strings.Contains(out, "floor Deployments and Services |") {
		t.Errorf("a phase that took no time has a row:\n%s", out)
	}
	without := renderSteady([]steadyResult{{rate: 5, items: 300}}, 5000, time.Minute)
	if strings.Contains(without, "Where the CPU went") {
		t.Errorf("a run without CPU readings has their table:\n%s", without)
	}
}

func TestSpecChangePatches(t *testing.T) {
	if got, want := string(deploymentImagePatch()),
		`{"spec":{"template":{"spec":{"containers":[{"image":"`+updatedImage+`","name":"nginx"}]}}}}`; got != want {
		t.Errorf("Deployment patch %s, want %s", got, want)
	}
	if got := string(applicationImagePatch("x")); !strings.HasPrefix(got,
		`{"spec":{"deployment":{"template":{"spec":{"containers":[`+
			`{"name":"nginx","image":"`+updatedImage+`","ports":[{"containerPort":80}]`) {
		t.Errorf("Application patch %s", got)
	}
}

func TestReconcileCountsAreDeltas(t *testing.T) {
	before := map[string]float64{
		`controller_runtime_reconcile_total{controller="apps-application",result="success"}`:       10,
		`workqueue_retries_total{controller="apps-application",name="apps-application"}`:           2,
		`rest_client_requests_total{code="200",host="h",method="PATCH"}`:                           5,
		`rest_client_requests_total{code="409",host="h",method="PATCH"}`:                           1,
		`rest_client_requests_total{code="200",host="h",method="GET"}`:                             7,
		`controller_runtime_reconcile_total{controller="apps-application",result="requeue_after"}`: 0,
	}
	after := map[string]float64{
		`controller_runtime_reconcile_total{controller="apps-application",result="success"}`:       25,
		`workqueue_retries_total{controller="apps-application",name="apps-application"}`:           6,
		`rest_client_requests_total{code="200",host="h",method="PATCH"}`:                           9,
		`rest_client_requests_total{code="409",host="h",method="PATCH"}`:                           2,
		`rest_client_requests_total{code="200",host="h",method="GET"}`:                             30,
		`controller_runtime_reconcile_total{controller="apps-application",result="requeue_after"}`: 4,
		`rest_client_requests_total{code="201",host="h",method="POST"}`:                            3,
	}
	want := "success 15, requeue_after 4, requeue 0, error 0, retries 4, 409s 1, writes 8"
	if got := reconcileCounts(before, after); got != want {
		t.Errorf("reconcileCounts = %q, want %q", got, want)
	}
}

// containsAll fails t for each of wants that out (what, e.g. "the table")
// does not contain.
func containsAll(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, out)
		}
	}
}
