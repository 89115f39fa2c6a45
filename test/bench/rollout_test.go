package main

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// app is an Application as a watch event carries it after its spec change
// (generation 2): the generation its status observed, and Ready.
func app(name string, observed int64, ready metav1.ConditionStatus) *sunappsv1.Application {
	a := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 2}}
	a.Status.ObservedGeneration = observed
	a.Status.Conditions = []metav1.Condition{{Type: sunappsv1.ConditionReady, Status: ready}}
	return a
}

func TestRolloutRecorderCountsStatusWritesAndFlaps(t *testing.T) {
	const T, F = metav1.ConditionTrue, metav1.ConditionFalse
	for _, c := range []struct {
		name    string
		events  []*sunappsv1.Application
		writes  float64
		flapped int
	}{
		{"two writes: the new generation seen, then Ready", []*sunappsv1.Application{
			app("a", 1, T), app("a", 2, F), app("a", 2, T)}, 2, 0},
		{"the rollout's counters cost writes", []*sunappsv1.Application{
			app("a", 1, T), app("a", 2, F), app("a", 2, F), app("a", 2, F), app("a", 2, T)}, 4, 0},
		{"Ready back to False after True with the new generation", []*sunappsv1.Application{
			app("a", 1, T), app("a", 2, T), app("a", 2, F), app("a", 2, T)}, 3, 1},
		{"True of the old generation is no flap", []*sunappsv1.Application{
			app("a", 1, T), app("a", 1, T), app("a", 2, F), app("a", 2, T)}, 3, 0},
		{"a mean over the items", []*sunappsv1.Application{
			app("a", 1, T), app("b", 1, T), app("a", 2, T), app("b", 2, F), app("b", 2, T)}, 1.5, 0},
	} {
		r := newRolloutRecorder()
		for _, e := range c.events {
			r.seen(watch.Modified, e, time.Time{})
		}
		got := r.summarize()
		if got.writes != c.writes || got.flapped != c.flapped || got.changes == 0 {
			t.Errorf("%s: %+v, want %v writes per change and %d flapped", c.name, got, c.writes, c.flapped)
		}
	}
}

func TestRenderChangeVerdicts(t *testing.T) {
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	out := renderChangeVerdicts([]steadyResult{
		{rate: 5, change: specChange{ready: latencies{p50: ms(800), p99: ms(4000)}},
			floorUpdate: latencies{p50: ms(300), p99: ms(2000)},
			rollout:     rolloutSummary{changes: 300, writes: 1.9},
			appFloor:    &appFloorAtRate{change: &latencies{p50: ms(900), p99: ms(3000)}}},
		{rate: 10, change: specChange{ready: latencies{p50: ms(700), p99: ms(2100)}},
			floorUpdate: latencies{p50: ms(300), p99: ms(2000)},
			rollout:     rolloutSummary{changes: 600, writes: 3.7, flapped: 12}},
		{rate: 20, busy: []string{"machine still 99 % busy after 10m0s"},
			change:   specChange{ready: latencies{p50: ms(600), p99: ms(1200)}},
			appFloor: &appFloorAtRate{change: &latencies{p50: ms(500), p99: ms(1100)}}},
	})
	for _, want := range []string{
		"| 5/s | 800 ms / 800 ms: met | 4000 ms / 2500 ms: **missed** by 1500 ms | 1.90 over 300: met | 0: met |",
		"| 10/s | 700 ms / 800 ms: met | 2100 ms / 2500 ms: met | 3.70 over 600: **missed** | 12 of 600: **missed** |",
		"| 20/s | no verdict: machine still 99 % busy after 10m0s |",
		"| rate | p50 operator / Application floor | p99 operator / Application floor |",
		"| 5/s | 800 ms / 900 ms (-100 ms) | 4000 ms / 3000 ms (+1000 ms) |",
		"| 20/s | no comparison: machine still 99 % busy after 10m0s | |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| 20/s | 600 ms") {
		t.Errorf("a rate that started on a busy machine is compared with the Application floor:\n%s", out)
	}
	if strings.Contains(out, "| 10/s | 700 ms / 0 ms") {
		t.Errorf("a rate without the Application floor's changes is compared with it:\n%s", out)
	}
	without := renderChangeVerdicts([]steadyResult{{rate: 5, rollout: rolloutSummary{changes: 300, writes: 2}}})
	if strings.Contains(without, "Application floor") {
		t.Errorf("a run without the Application floor's changes has its table:\n%s", without)
	}
}
