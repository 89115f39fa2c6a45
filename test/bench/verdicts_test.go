package main

import (
	"strings"
	"testing"
	"time"
)

func TestRenderVerdictsAgainstTheApplicationFloor(t *testing.T) {
	run := func(variant string, apiserverCPU, requests float64, converge time.Duration, busy string) result {
		r := na()
		r.variant, r.n, r.converge, r.busy = variant, 1000, converge, busy
		r.processes = map[string]float64{"kube-apiserver": apiserverCPU}
		r.requests = map[string]float64{"POST applications": requests}
		return r
	}
	floor := func(busy string) result {
		return withSameWork(run(appFloorVariant, 75.6, 21600, 100*time.Second, busy), 4.0, 2.75)
	}
	tests := []struct {
		name    string
		results []result
		want    []string
	}{{
		name:    "met",
		results: []result{floor(""), run("operator", 80, 21000, 104*time.Second, "")},
		want: []string{
			"| 1000 | operator | kube-apiserver CPU-s per Application ≤ 1.10 | 1.06 (1.06–1.06) | 1 | met |",
			"| 1000 | operator | API requests per Application ≤ 1.00 | 0.97 (0.97–0.97) | 1 | met |",
			"| 1000 | operator | convergence ≤ 1.05 | 1.04 (1.04–1.04) | 1 | met |",
		},
	}, {
		name:    "missed",
		results: []result{floor(""), run("operator", 106.6, 23500, 142*time.Second, "")},
		want: []string{
			"| kube-apiserver CPU-s per Application ≤ 1.10 | 1.41 (1.41–1.41) | 1 | **missed** by 0.31 |",
			"| API requests per Application ≤ 1.00 | 1.09 (1.09–1.09) | 1 | **missed** by 0.09 |",
			"| convergence ≤ 1.05 | 1.42 (1.42–1.42) | 1 | **missed** by 0.37 |",
		},
	}, {
		name: "the median of three runs, paired in order",
		results: []result{
			floor(""), run("operator", 75.6, 21600, 100*time.Second, ""),
			floor(""), run("operator", 90.72, 21600, 120*time.Second, ""),
			floor(""), run("operator", 83.16, 21600, 110*time.Second, ""),
		},
		want: []string{
			"| kube-apiserver CPU-s per Application ≤ 1.10 | 1.10 (1.00–1.20) | 3 | met |",
			"| convergence ≤ 1.05 | 1.10 (1.00–1.20) | 3 | **missed** by 0.05 |",
		},
	}, {
		name:    "a third decimal when two would round a miss onto the limit",
		results: []result{floor(""), run("operator", 80, 21000, 105310*time.Millisecond, "")},
		want: []string{
			"| kube-apiserver CPU-s per Application ≤ 1.10 | 1.06 (1.06–1.06) | 1 | met |",
			"| convergence ≤ 1.05 | 1.053 (1.053–1.053) | 1 | **missed** by 0.003 |",
		},
	}, {
		name: "a pair that started on a busy machine is left out",
		results: []result{
			floor("machine still 99 % busy after 10m0s"), run("operator", 200, 21600, 300*time.Second, ""),
			floor(""), run("operator", 75.6, 21600, 100*time.Second, ""),
		},
		want: []string{
			"| convergence ≤ 1.05 | 1.00 (1.00–1.00) | 1 (1 left out: Application floor (plain client): " +
				"machine still 99 % busy after 10m0s) | met |",
		},
	}, {
		name: "the same work's CPU is a control, with no target",
		results: []result{
			floor(""), withSameWork(run("operator", 80, 21000, 104*time.Second, ""), 4.4, 3.0),
			floor(""), withSameWork(run("operator", 80, 21000, 104*time.Second, ""), 3.8, 2.6),
			floor(""), withSameWork(run("operator", 80, 21000, 104*time.Second, ""), 4.0, 2.8),
		},
		want: []string{
			"| 1000 | operator | control: kube-scheduler + kwok-controller CPU-s (the same Pods in both) | " +
				"1.01 (0.95–1.10) | 3 | no target: even (0.97-1.03) |",
		},
	}, {
		name: "pairs run in both orders are listed with their order",
		results: []result{
			floor(""), withSameWork(run("operator", 80, 21000, 106*time.Second, ""), 4.4, 3.0),
			operatorFirst(floor("")), operatorFirst(withSameWork(run("operator", 80, 21000, 101*time.Second, ""), 3.8, 2.6)),
			floor(""), withSameWork(run("operator", 80, 21000, 104*time.Second, ""), 4.0, 2.8),
		},
		want: []string{
			"| convergence ≤ 1.05 | 1.04 (1.01–1.06) | 3 | met |",
			"| 1000 | operator | 1 | the floors first | 1.06 | 1.10 |",
			"| 1000 | operator | 2 | the operator first | 1.01 | 0.95 |",
			"| 1000 | operator | 3 | the floors first | 1.04 | 1.01 |",
		},
	}, {
		name:    "no verdict when every pair is left out",
		results: []result{floor(""), run("operator", 80, 21000, 104*time.Second, "machine still 40 % busy after 10m0s")},
		want: []string{
			"| convergence ≤ 1.05 | - | 0 | no verdict: operator: machine still 40 % busy after 10m0s |",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderVerdicts(tt.results)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("verdicts lack\n%s\ngot\n%s", w, got)
				}
			}
		})
	}
}

func TestRenderVerdictsListsNoOrderWhenEveryPairRanAlike(t *testing.T) {
	results := make([]result, 0, 6)
	for range 3 {
		for _, variant := range []string{appFloorVariant, "operator"} {
			r := na()
			r.processes = map[string]float64{}
			r = withSameWork(r, 4.0, 2.8)
			r.variant, r.n, r.converge, r.operatorFirst = variant, 1000, 100*time.Second, true
			results = append(results, r)
		}
	}
	got := renderVerdicts(results)
	if !strings.Contains(got, "| convergence ≤ 1.05 | 1.00 (1.00–1.00) | 3 | met |") {
		t.Fatalf("no verdict in\n%s", got)
	}
	if strings.Contains(got, "in the order it ran") {
		t.Errorf("pairs that all ran the operator first are listed by order:\n%s", got)
	}
}

// operatorFirst marks r as measured in a run where the operator ran before
// the floors.
func operatorFirst(r result) result {
	r.operatorFirst = true
	return r
}

// withSameWork gives r kube-scheduler's and kwok-controller's CPU seconds.
func withSameWork(r result, scheduler, kwok float64) result {
	r.processes["kube-scheduler"], r.processes["kwok-controller"] = scheduler, kwok
	return r
}

func TestControlReading(t *testing.T) {
	for _, tt := range []struct {
		med  float64
		want string
	}{
		{0.92, "under 0.97, the machine favoured the operator's runs"},
		{0.97, "even (0.97-1.03)"},
		{0.964, "under 0.97, the machine favoured the operator's runs"},
		{1.036, "over 1.03, the machine ran against the operator's runs, or the operator contended"},
		{1.00, "even (0.97-1.03)"},
		{1.03, "even (0.97-1.03)"},
		{1.09, "over 1.03, the machine ran against the operator's runs, or the operator contended"},
	} {
		if got := controlReading(tt.med); got != tt.want {
			t.Errorf("controlReading(%.2f) = %q, want %q", tt.med, got, tt.want)
		}
	}
}

func TestRenderVerdictsNeedsAnApplicationFloor(t *testing.T) {
	r := na()
	r.variant, r.n, r.converge = "operator", 100, time.Second
	if got := renderVerdicts([]result{r}); got != "" {
		t.Errorf("verdicts without an Application floor: %q", got)
	}
}

func TestConvergeRatioGivesNoneForABusyStart(t *testing.T) {
	op, floor := na(), na()
	op.variant, op.converge = "operator", 20*time.Second
	floor.variant, floor.converge = "floor (plain client)", 10*time.Second
	if got, want := convergeRatio("operator/floor", "%.2f", op, floor), "operator/floor 2.00"; got != want {
		t.Errorf("quiet start: %q, want %q", got, want)
	}
	floor.busy = "machine still 99 % busy after 10m0s"
	want := "operator/floor: no ratio (floor (plain client): machine still 99 % busy after 10m0s)"
	if got := convergeRatio("operator/floor", "%.2f", op, floor); got != want {
		t.Errorf("busy start: %q, want %q", got, want)
	}
}

func TestRenderTableGivesTheOperatorBothRatios(t *testing.T) {
	run := func(variant string, converge time.Duration, busy string) result {
		r := na()
		r.variant, r.n, r.converge, r.busy = variant, 100, converge, busy
		return r
	}
	quiet := renderTable([]result{run("floor (plain client)", 10*time.Second, ""),
		run(appFloorVariant, 20*time.Second, ""), run("operator", 20*time.Second, "")}, 0)
	if want := "| operator/floor **2.00**, operator/Application floor **1.00** |"; !strings.Contains(quiet, want) {
		t.Errorf("table lacks %q:\n%s", want, quiet)
	}
	busy := renderTable([]result{run("floor (plain client)", 10*time.Second, "machine still 99 % busy after 10m0s"),
		run("operator", 20*time.Second, "")}, 0)
	for _, want := range []string{
		"| operator/floor: no ratio (floor (plain client): machine still 99 % busy after 10m0s) |",
		"| no ratio: machine still 99 % busy after 10m0s |",
	} {
		if !strings.Contains(busy, want) {
			t.Errorf("table lacks %q:\n%s", want, busy)
		}
	}
}
