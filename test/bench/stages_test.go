package main

import (
	"strings"
	"testing"
	"time"
)

func TestStageSummaryMeasuresEachStageFromTheLastOneSeen(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tr := newTracker(2)
	tr.markCreated("a", at(0))
	tr.markCreated("b", at(100))
	tr.ready["a"], tr.ready["b"] = at(900), at(2100)

	r := newStageRecorder()
	r.mark("a", stageDeployment, at(200))
	r.mark("a", stageDeployment, at(300)) // a later sighting does not move the stage
	r.mark("a", stageAvailable, at(700))
	r.mark("b", stageDeployment, at(600))
	// b's availability was not seen: its Ready counts from its Deployment.
	r.mark("stale", stageDeployment, at(50)) // an object of an earlier run: no create time
	r.mark("", stagePod, at(10))             // a Pod without the app label

	s := r.summarize(tr, "operator", 2, stageReady)
	for _, c := range []struct {
		stage    stage
		seen     int
		p50, p99 time.Duration
		since    time.Duration
	}{
		{stageDeployment, 2, 200 * time.Millisecond, 500 * time.Millisecond, 200 * time.Millisecond},
		{stageAvailable, 1, 500 * time.Millisecond, 500 * time.Millisecond, 700 * time.Millisecond},
		{stageReady, 2, 200 * time.Millisecond, 1500 * time.Millisecond, 900 * time.Millisecond},
		{stagePod, 0, 0, 0, 0},
	} {
		got := s.step[c.stage]
		if s.seen[c.stage] != c.seen || got.p50 != c.p50 || got.p99 != c.p99 || got.since != c.since {
			t.Errorf("%s: seen %d, p50 %s, p99 %s, since create %s; want %d, %s, %s, %s", stageNames[c.stage],
				s.seen[c.stage], got.p50, got.p99, got.since, c.seen, c.p50, c.p99, c.since)
		}
	}
	// The last item to reach each stage, from the first create (a's, at 0).
	for st, want := range map[stage]time.Duration{
		stageDeployment: 600 * time.Millisecond, stageAvailable: 700 * time.Millisecond,
		stageReady: 2100 * time.Millisecond, stagePod: 0,
	} {
		if s.last[st] != want {
			t.Errorf("%s: the last at %s, want %s", stageNames[st], s.last[st], want)
		}
	}
	table := renderStages([]stageSummary{s})
	for _, want := range []string{
		"| " + stageNames[stageDeployment] + " | 200 ms / 500 ms (200 ms) |", // the first table
		"| " + stageNames[stageReady] + " | 2100 ms |",                       // the second
		"| " + stageNames[stagePod] + " | - |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no row %q:\n%s", want, table)
		}
	}
}
