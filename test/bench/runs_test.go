package main

import (
	"strings"
	"testing"
	"time"
)

func TestFloorsFirst(t *testing.T) {
	tests := []struct {
		name                 string
		floorLast, alternate bool
		want                 []bool // runs 1 to 4
	}{
		{name: "the default: alternating, the floors first in odd runs", alternate: true,
			want: []bool{true, false, true, false}},
		{name: "-alternate=false: the floors always first", want: []bool{true, true, true, true}},
		{name: "-floor-last -alternate=false: the operator always first", floorLast: true,
			want: []bool{false, false, false, false}},
		{name: "-floor-last: alternating, the operator first in odd runs", floorLast: true, alternate: true,
			want: []bool{false, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				if got := floorsFirst(tt.floorLast, tt.alternate, i+1); got != want {
					t.Errorf("run %d: floorsFirst = %t, want %t", i+1, got, want)
				}
			}
		})
	}
}

func TestCountOf(t *testing.T) {
	ns := []int{1000, 1000, 5000, 1000}
	for i, want := range []int{0, 1, 0, 2} {
		if got := countOf(ns[:i], ns[i]); got != want {
			t.Errorf("countOf(%v, %d) = %d, want %d", ns[:i], ns[i], got, want)
		}
	}
}

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
