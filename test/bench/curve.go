package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// curveReference is the N the cost curve compares every other N with.
const curveReference = 1000

// curveTolerance is how far a per-Application cost may move from its value
// at curveReference (issue 15: within ±20 % from 1,000 to 10,000).
const curveTolerance = 0.20

// renderCurve tabulates what one Application costs at each N, per variant:
// convergence time, requests kube-apiserver served, the machine's and the
// process's CPU, heap and peak RSS, and, for the operator, its start-up on
// a cluster holding the N converged Applications. Operator figures more
// than curveTolerance away from N=curveReference are marked.
func renderCurve(results []result) string {
	ns := map[int]bool{}
	for _, r := range results {
		ns[r.n] = true
	}
	if len(ns) < 2 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("Cost per Application by N (first create to convergence; **bold**: the operator's more than 20 % " +
		"away from N=1000):\n\n| variant | N | converged in /app | requests/app | machine CPU ms/app | own CPU ms/app " +
		"| heap/app | peak RSS | restart: ready | every Application reconciled | writes |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	variants := []string{}
	for _, r := range results {
		if !slices.Contains(variants, r.variant) {
			variants = append(variants, r.variant)
		}
	}
	for _, v := range variants {
		var ref *result
		for i := range results {
			if results[i].variant == v && results[i].n == curveReference {
				ref = &results[i]
			}
		}
		rows := []result{}
		for _, r := range results {
			if r.variant == v {
				rows = append(rows, r)
			}
		}
		slices.SortFunc(rows, func(a, b result) int { return a.n - b.n })
		for _, r := range rows {
			c, refC := curveCosts(r), curveCosts(result{})
			if ref != nil {
				refC = curveCosts(*ref)
			}
			cell := func(i int, format string) string {
				if c[i] < 0 {
					return "-"
				}
				out := fmt.Sprintf(format, c[i])
				if isOperator(v) && ref != nil && r.n != curveReference && offCurve(c[i], refC[i]) {
					out = "**" + out + "**"
				}
				return out
			}
			restart, reconciled, writes := "-", "-", "-"
			if r.restartReady > 0 {
				restart, reconciled, writes = dur(r.restartReady), dur(r.restartReconciled), intOrNA(r.restartWrites)
			}
			rss := "-"
			if r.peakRSS >= 0 {
				rss = fmt.Sprintf("%.0f MiB", r.peakRSS/(1<<20))
			}
			fmt.Fprintf(&sb, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v, r.n,
				cell(0, "%.1f ms"), cell(1, "%.1f"), cell(2, "%.1f"), cell(3, "%.2f"), cell(4, "%.1f KiB"),
				rss, restart, reconciled, writes)
		}
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// curveCosts are r's per-Application costs, in renderCurve's column order;
// -1 where not measured.
func curveCosts(r result) [5]float64 {
	if r.n == 0 {
		return [5]float64{-1, -1, -1, -1, -1}
	}
	n := float64(r.n)
	out := [5]float64{float64(r.converge.Milliseconds()) / n, -1, -1, -1, -1}
	if r.requests != nil {
		var total float64
		for _, v := range r.requests {
			total += v
		}
		out[1] = total / n
	}
	if r.machineBusy >= 0 {
		out[2] = 1000 * r.machineBusy / n
	}
	if r.cpu >= 0 {
		out[3] = 1000 * r.cpu / n
	}
	if r.heapPerApp >= 0 {
		out[4] = r.heapPerApp / 1024
	}
	return out
}

// offCurve tells whether v is more than curveTolerance away from ref.
func offCurve(v, ref float64) bool {
	if v < 0 || ref <= 0 {
		return false
	}
	return math.Abs(v-ref)/ref > curveTolerance
}
