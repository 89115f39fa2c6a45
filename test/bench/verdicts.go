package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// costTarget is one of the operator's cost targets against the Application
// floor of the same run (issue "The operator's own cost"): the operator's
// figure over the Application floor's must stay at or under max.
type costTarget struct {
	name string
	max  float64
	// control marks a figure printed beside the targets with no max
	// (sameWork): its verdict says what its median tells of the others.
	control bool
	// of is the figure compared, per Application where it is a count;
	// ok is false when the result did not measure it.
	of func(r result) (v float64, ok bool)
}

var costTargets = []costTarget{
	{name: "kube-apiserver CPU-s per Application", max: 1.10, of: func(r result) (float64, bool) {
		v, ok := r.processes["kube-apiserver"]
		return v / float64(r.n), ok && r.n > 0
	}},
	{name: "API requests per Application", max: 1.00, of: func(r result) (float64, bool) {
		if r.requests == nil || r.n == 0 {
			return 0, false
		}
		var total float64
		for _, v := range r.requests {
			total += v
		}
		return total / float64(r.n), true
	}},
	convergenceTarget,
}

// convergenceTarget is the wall-clock target, listed again per pair of runs
// beside the control (renderOrder).
var convergenceTarget = costTarget{name: "convergence", max: 1.05, of: func(r result) (float64, bool) {
	return r.converge.Seconds(), r.converge > 0
}}

// sameWork is printed under the targets, as a control, not a target: the
// CPU of the processes whose work is the same in both variants
// (kube-scheduler places and kwok-controller readies the same Pods). Above
// 1.00, the same work cost more CPU in the operator's run, because the
// machine was slower then or because the operator's process contended with
// them, and convergence, a wall-clock figure on a saturated machine, moves
// with it (docs/performance.md). The benchmark cannot tell the two apart,
// so the verdicts stand as measured.
var sameWork = costTarget{name: "control: kube-scheduler + kwok-controller CPU-s (the same Pods in both)",
	control: true, of: func(r result) (float64, bool) {
		s, okS := r.processes["kube-scheduler"]
		k, okK := r.processes["kwok-controller"]
		return s + k, okS && okK
	}}

// evenMachine is how far from 1.00, in hundredths, the control's median
// may be for the machine to count as even between the variants' runs: the
// margin of the convergence target is 0.05, and convergence moves with the
// control (docs/performance.md).
const evenMachine = 3

// controlReading says what the control's median ratio tells of the
// verdicts above it, judged on the median as printed (two decimals).
func controlReading(med float64) string {
	lo, hi := float64(100-evenMachine)/100, float64(100+evenMachine)/100
	switch printed := roundTo(med, 2); {
	case printed < lo:
		return fmt.Sprintf("under %.2f, the machine favoured the operator's runs", lo)
	case printed > hi:
		return fmt.Sprintf("over %.2f, the machine ran against the operator's runs, or the operator contended", hi)
	}
	return fmt.Sprintf("even (%.2f-%.2f)", lo, hi)
}

// renderVerdicts judges, for each N, every operator variant against the
// Application floor measured in the same run: each target's ratio as the
// median with min and max over the runs at that N (the i-th run of a
// variant paired with the i-th Application floor run), and met or missed.
// A pair in which either side started on a busy machine (result.busy) is
// left out and said so; with no pair left there is no verdict.
func renderVerdicts(results []result) string {
	byN := map[int]map[string][]result{}
	for _, r := range results {
		if byN[r.n] == nil {
			byN[r.n] = map[string][]result{}
		}
		byN[r.n][r.variant] = append(byN[r.n][r.variant], r)
	}
	var sb strings.Builder
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		floors := byN[n][appFloorVariant]
		if len(floors) == 0 {
			continue
		}
		for _, variant := range slices.Sorted(maps.Keys(byN[n])) {
			if !isOperator(variant) {
				continue
			}
			if sb.Len() == 0 {
				sb.WriteString("The operator's cost against the Application floor of the same run " +
					"(operator / Application floor; median, min and max over the runs):\n\n" +
					"| N | variant | target | ratio | runs | verdict |\n|---:|---|---|---:|---:|---|\n")
			}
			for _, t := range costTargets {
				fmt.Fprintf(&sb, "| %d | %s | %s ≤ %.2f | %s |\n", n, variant, t.name, t.max,
					verdict(t, byN[n][variant], floors))
			}
			fmt.Fprintf(&sb, "| %d | %s | %s | %s |\n", n, variant, sameWork.name, verdict(sameWork, byN[n][variant], floors))
		}
	}
	if sb.Len() > 0 {
		sb.WriteString(renderOrder(byN))
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// renderOrder lists, when the operator ran before the floors in some runs
// and after them in others (-alternate), each pair's convergence and
// control ratios with its order, so that an order effect shows beside the
// medians. "" when every pair ran in the same order.
func renderOrder(byN map[int]map[string][]result) string {
	var sb strings.Builder
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		floors := byN[n][appFloorVariant]
		for _, variant := range slices.Sorted(maps.Keys(byN[n])) {
			ops := byN[n][variant]
			pairs := min(len(ops), len(floors))
			if !isOperator(variant) || !mixedOrder(ops[:pairs]) {
				continue
			}
			if sb.Len() == 0 {
				sb.WriteString("\nEach pair of runs in the order it ran (-alternate; the same ratios as above):\n\n" +
					"| N | variant | run | order | convergence | control |\n|---:|---|---:|---|---:|---:|\n")
			}
			for i := range pairs {
				order := "the floors first"
				if ops[i].operatorFirst {
					order = "the operator first"
				}
				fmt.Fprintf(&sb, "| %d | %s | %d | %s | %s | %s |\n", n, variant, i+1, order,
					pairRatio(convergenceTarget, ops[i], floors[i]), pairRatio(sameWork, ops[i], floors[i]))
			}
		}
	}
	return sb.String()
}

// mixedOrder tells whether ops ran in both orders.
func mixedOrder(ops []result) bool {
	for _, r := range ops {
		if r.operatorFirst != ops[0].operatorFirst {
			return true
		}
	}
	return false
}

// pairRatio is target t's ratio of op over floor with two decimals, or why
// there is none.
func pairRatio(t costTarget, op, floor result) string {
	ratio, why := pairOf(t, op, floor)
	if why != "" {
		return "- (" + why + ")"
	}
	return fmt.Sprintf("%.2f", ratio)
}

// pairOf is target t's ratio of op over floor, or why the pair has none
// (a busy start, a figure not measured).
func pairOf(t costTarget, op, floor result) (ratio float64, why string) {
	if busy := cmpBusy(op, floor); busy != "" {
		return 0, busy
	}
	v, okV := t.of(op)
	ref, okRef := t.of(floor)
	if !okV || !okRef || ref <= 0 {
		return 0, notMeasured
	}
	return v / ref, ""
}

// verdict is the ratio, runs and verdict cells of target t for the
// operator runs ops against the Application floor runs floors; a control
// (sameWork) gets "no target" and what its median says (controlReading)
// for a verdict.
func verdict(t costTarget, ops, floors []result) string {
	var ratios []float64
	var skipped []string
	for i := range min(len(ops), len(floors)) {
		ratio, why := pairOf(t, ops[i], floors[i])
		if why != "" {
			skipped = append(skipped, why)
			continue
		}
		ratios = append(ratios, ratio)
	}
	if len(ratios) == 0 {
		why := "no pair of runs"
		if len(skipped) > 0 {
			why = strings.Join(skipped, "; ")
		}
		return fmt.Sprintf("- | 0 | no verdict: %s", why)
	}
	slices.Sort(ratios)
	med := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		med = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	prec := decimals(t, med)
	cell := fmt.Sprintf("%.*f (%.*f–%.*f)", prec, med, prec, ratios[0], prec, ratios[len(ratios)-1])
	runs := fmt.Sprint(len(ratios))
	if len(skipped) > 0 {
		runs += fmt.Sprintf(" (%d left out: %s)", len(skipped), strings.Join(skipped, "; "))
	}
	judged := verdictMet
	switch {
	case t.control:
		judged = "no target: " + controlReading(med)
	case med > t.max:
		judged = fmt.Sprintf("**missed** by %.*f", prec, med-t.max)
	}
	return fmt.Sprintf("%s | %s | %s", cell, runs, judged)
}

// decimals is how many decimals the ratios of target t are printed with:
// two, or more (up to four) when two would round a missed median onto its
// limit, which would print "1.05 ≤ 1.05: missed by 0.00" for a median of
// 1.053.
func decimals(t costTarget, med float64) int {
	prec := 2
	for !t.control && med > t.max && prec < 4 && roundTo(med, prec) <= t.max {
		prec++
	}
	return prec
}

// roundTo rounds x to prec decimals.
func roundTo(x float64, prec int) float64 {
	scale := math.Pow10(prec)
	return math.Round(x*scale) / scale
}

// cmpBusy says why op and floor do not compare ("" when they do): one of
// them started on a busy machine.
func cmpBusy(op, floor result) string {
	for _, r := range []result{op, floor} {
		if r.busy != "" {
			return r.variant + ": " + r.busy
		}
	}
	return ""
}
