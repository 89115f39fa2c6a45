package main

import "fmt"

// Repeated runs: `make bench BENCH_N=1000,1000,1000` measures every
// variant three times at N=1000. The tables name each run ("operator,
// run 2") and compare it with the references of the same run, as the
// verdicts pair the i-th operator run with the i-th Application floor run.

// countOf is how many times n occurs in ns.
func countOf(ns []int, n int) int {
	count := 0
	for _, m := range ns {
		if m == n {
			count++
		}
	}
	return count
}

// floorsFirst tells whether the floors run before the operator in the
// run-th run (from 1) of an N: before unless floorLast, the other way round
// in every even run with alternate. Whichever runs later pays for a
// cluster that has made and deleted more and for a machine that drifts
// over the hour (docs/performance-log.md, "One namespace, the order
// alternated"): alternating spreads that over both sides of the ratio.
func floorsFirst(floorLast, alternate bool, run int) bool {
	first := !floorLast
	if alternate && run%2 == 0 {
		first = !first
	}
	return first
}

// numberRuns returns a copy of results with each result's run (1-based,
// in the order measured) and runs (how many of its variant at its N) set.
func numberRuns(results []result) []result {
	type key struct {
		n       int
		variant string
	}
	count := map[key]int{}
	out := make([]result, len(results))
	for i, r := range results {
		k := key{r.n, r.variant}
		count[k]++
		r.run = count[k]
		out[i] = r
	}
	for i := range out {
		out[i].runs = count[key{out[i].n, out[i].variant}]
	}
	return out
}

// name is how the tables call r: its variant, and its run when its variant
// ran more than once at its N (numberRuns).
func (r result) name() string {
	if r.runs > 1 {
		return fmt.Sprintf("%s, run %d", r.variant, r.run)
	}
	return r.variant
}

// sameRun returns the run of variant at r's N that r compares with: the
// one with r's run number, or the last one when variant ran fewer times;
// false when it did not run at r's N. results are numbered (numberRuns).
func sameRun(results []result, r result, variant string) (result, bool) {
	var last result
	found := false
	for _, x := range results {
		if x.n != r.n || x.variant != variant {
			continue
		}
		if x.run == r.run {
			return x, true
		}
		last, found = x, true
	}
	return last, found
}
