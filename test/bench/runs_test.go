package main

import (
	"strings"
	"testing"
	"time"
)

func TestNumberRuns(t *testing.T) {
	results := numberRuns([]result{
		{n: 1000, variant: "floor (plain client)"},
		{n: 1000, variant: appFloorVariant},
		{n: 1000, variant: "operator"},
		{n: 100, variant: "operator"},
		{n: 1000, variant: "floor (plain client)"},
		{n: 1000, variant: "operator"},
	})
	for i, want := range []struct {
		run  int
		name string
	}{
		{1, "floor (plain client), run 1"},
		{1, appFloorVariant},
		{1, "operator, run 1"},
		{1, "operator"},
		{2, "floor (plain client), run 2"},
		{2, "operator, run 2"},
	} {
		if got := results[i]; got.run != want.run || got.name() != want.name {
			t.Errorf("result %d: run %d named %q; want run %d named %q", i, got.run, got.name(), want.run, want.name)
		}
	}
	for _, tc := range []struct {
		of      int
		variant string
		want    int // index in results; -1: none
	}{
		{5, "floor (plain client)", 4},  // the operator's second run: the floor's second
		{2, "floor (plain client)", 0},  // the first: the first
		{5, appFloorVariant, 1},         // one Application floor run: that one
		{3, "floor (plain client)", -1}, // none at N=100
		{0, "operator", 2},              // the floor's first run: the operator's first
	} {
		got, ok := sameRun(results, results[tc.of], tc.variant)
		switch {
		case tc.want < 0 && ok:
			t.Errorf("sameRun(%s, %q) = %s; want none", results[tc.of].name(), tc.variant, got.name())
		case tc.want >= 0 && (!ok || got.run != results[tc.want].run || got.variant != results[tc.want].variant):
			t.Errorf("sameRun(%s, %q) = %s, %v; want %s", results[tc.of].name(), tc.variant, got.name(), ok,
				results[tc.want].name())
		}
	}
}

// TestRenderTableRatiosOfTheSameRun: with three runs at one N, each
// operator row compares with the Application floor of its own run.
func TestRenderTableRatiosOfTheSameRun(t *testing.T) {
	runs := []struct{ appFloor, op time.Duration }{{40, 50}, {50, 55}, {60, 60}}
	results := make([]result, 0, 2*len(runs))
	for _, s := range runs {
		a, o := na(), na()
		a.n, a.variant, a.converge = 1000, appFloorVariant, s.appFloor*time.Second
		o.n, o.variant, o.converge = 1000, "operator", s.op*time.Second
		results = append(results, a, o)
	}
	table := renderTable(numberRuns(results), 0)
	for _, want := range []string{
		"| 1000 | operator, run 1 | 50.0 s |", "operator/Application floor **1.25**",
		"| 1000 | operator, run 2 | 55.0 s |", "operator/Application floor **1.10**",
		"| 1000 | operator, run 3 | 60.0 s |", "operator/Application floor **1.00**",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}
