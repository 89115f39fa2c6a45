package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// margin is the target: the Application's p99 apply → first answer at
// most the direct Deployment and Service's p99 plus this.
const margin = 500 * time.Millisecond

// settleStreak is how many answers in a row from the new version end a
// spec change: from the first of them on, every request answers it.
const settleStreak = 20

// percentile is the nearest-rank p-quantile (0 < p ≤ 1) of sorted: the
// smallest value with at least p of the values at or under it. Under 100
// values, p99 is the largest.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// The tolerance keeps 0.5 × 20 (exactly 10) from becoming 11 when
	// the product is a hair over.
	rank := int(math.Ceil(p*float64(len(sorted)) - 1e-9))
	return sorted[max(0, min(rank, len(sorted))-1)]
}

// summary is one variant's figures.
type summary struct {
	n                  int
	p50, p99, min, max time.Duration
}

func summarize(runs []time.Duration) summary {
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	if len(sorted) == 0 {
		return summary{}
	}
	return summary{n: len(sorted), p50: percentile(sorted, 0.50), p99: percentile(sorted, 0.99),
		min: sorted[0], max: sorted[len(sorted)-1]}
}

// secs prints d in seconds with two decimals.
func secs(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// signedSecs is secs with its sign, "+0.12 s" or "-0.12 s".
func signedSecs(d time.Duration) string {
	if d < 0 {
		return "-" + secs(-d)
	}
	return "+" + secs(d)
}

// verdict judges the Application's p99 against the direct one's +
// margin, as measured: "met", or by how much it missed (in ms under
// 0.01 s, which two decimals would print as 0.00 s).
func verdict(app, dir summary) string {
	if app.n == 0 || dir.n == 0 {
		return "no verdict: a variant has no run"
	}
	over := app.p99 - (dir.p99 + margin)
	switch {
	case over <= 0:
		return "met"
	case over < 10*time.Millisecond:
		return fmt.Sprintf("**missed** by %d ms", (over+time.Millisecond-1)/time.Millisecond)
	}
	return "**missed** by " + secs(over)
}

// answer is one request of a spec change's client: when its answer came,
// after the change was applied, and what it was ("" for a failed
// request: an error, a timeout or a status other than 200).
type answer struct {
	at   time.Duration
	body string
}

// settled says whether the last settleStreak answers are all want and, if
// so, when the first of the run of want answers they end came: the moment
// from which every request answered want.
func settled(answers []answer, want string) (time.Duration, bool) {
	start := len(answers)
	for start > 0 && answers[start-1].body == want {
		start--
	}
	if len(answers)-start < settleStreak {
		return 0, false
	}
	return answers[start].at, true
}

// failures counts the failed requests among answers.
func failures(answers []answer) int {
	n := 0
	for _, a := range answers {
		if a.body == "" {
			n++
		}
	}
	return n
}

// change is the result of one spec change: when every request answered
// the new version, after how many requests, of which how many failed.
type change struct {
	settled  time.Duration
	requests int
	failed   int
	// probeFailed: a readiness probe of a v2 Pod failed before every
	// request answered v2.
	probeFailed bool
}

// changeProbes are the changes' figures with their probe failures.
func changeProbes(changes []change) []probed {
	out := make([]probed, 0, len(changes))
	for _, c := range changes {
		out = append(out, probed{took: c.settled, failed: c.probeFailed})
	}
	return out
}

// settledTimes are the changes' times to every request answering v2.
func settledTimes(changes []change) []time.Duration {
	out := make([]time.Duration, 0, len(changes))
	for _, c := range changes {
		out = append(out, c.settled)
	}
	return out
}

// p99Header names the p99 column: the largest value when fewer than 100
// runs are summarized, as the nearest-rank p99 then is.
func p99Header(n int) string {
	if n < 100 {
		return "p99 (= max: n < 100)"
	}
	return "p99"
}

// renderFirst is the table of apply → first answer with its verdict.
func renderFirst(app, dir []time.Duration) string {
	a, d := summarize(app), summarize(dir)
	var sb strings.Builder
	fmt.Fprintf(&sb, "`kubectl apply` → first HTTP 200 through the Service's ClusterIP, one Pod of the test "+
		"image on the real node; %d runs of each, alternated, one at a time.\n\n", max(a.n, d.n))
	fmt.Fprintf(&sb, "| variant | runs | p50 | %s | min | max |\n|---|---:|---:|---:|---:|---:|\n",
		p99Header(min(a.n, d.n)))
	for _, r := range []struct {
		v variant
		s summary
	}{{application, a}, {direct, d}} {
		fmt.Fprintf(&sb, "| %s | %d | %s | %s | %s | %s |\n", r.v, r.s.n, secs(r.s.p50), secs(r.s.p99),
			secs(r.s.min), secs(r.s.max))
	}
	fmt.Fprintf(&sb, "\nApplication p99 − direct p99: %s. Target, Application p99 ≤ direct p99 + %s: %s.\n",
		signedSecs(a.p99-d.p99), secs(margin), verdict(a, d))
	fmt.Fprintf(&sb, "\nRuns in order (s): Application %s; direct %s.\n", list(app), list(dir))
	return sb.String()
}

// renderChanges is the table of the spec changes: no target, figures.
func renderChanges(app, dir []change) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Spec change v1 → v2 (`kubectl apply`, 2 replicas, maxSurge 1, maxUnavailable 0) → every "+
		"request answered by v2 (%d v2 answers in a row, from the first of them), a request every 20 ms "+
		"through the ClusterIP; %d of each, alternated. No target.\n\n", settleStreak, max(len(app), len(dir)))
	sb.WriteString("| variant | runs | p50 | max | min | failed requests (of) |\n|---|---:|---:|---:|---:|---:|\n")
	for _, r := range []struct {
		v  variant
		cs []change
	}{{application, app}, {direct, dir}} {
		var failed, requests int
		for _, c := range r.cs {
			failed += c.failed
			requests += c.requests
		}
		s := summarize(settledTimes(r.cs))
		fmt.Fprintf(&sb, "| %s | %d | %s | %s | %s | %d (%d) |\n", r.v, s.n, secs(s.p50), secs(s.max), secs(s.min),
			failed, requests)
	}
	a, d := settledTimes(app), settledTimes(dir)
	fmt.Fprintf(&sb, "\nApplication p50 − direct p50: %s. Runs in order (s): Application %s; direct %s.\n",
		signedSecs(summarize(a).p50-summarize(d).p50), list(a), list(d))
	return sb.String()
}

// list prints runs in seconds, two decimals, comma-separated.
func list(runs []time.Duration) string {
	parts := make([]string, 0, len(runs))
	for _, r := range runs {
		parts = append(parts, fmt.Sprintf("%.2f", r.Seconds()))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
