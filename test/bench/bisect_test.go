package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestParseBisect(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    bisectSpec
		wantErr bool
	}{
		{"", bisectSpec{}, false},
		{"2,16,3", bisectSpec{lo: 2, hi: 16, steps: 3}, false},
		{"0.5,4,0", bisectSpec{lo: 0.5, hi: 4}, false},
		{"4,2,3", bisectSpec{}, true},
		{"0,2,3", bisectSpec{}, true},
		{"2,16", bisectSpec{}, true},
		{"2,16,x", bisectSpec{}, true},
	} {
		got, err := parseBisect(c.in)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("parseBisect(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.wantErr)
		}
	}
}

func TestBisectRateFindsTheHighestSustainedRate(t *testing.T) {
	for _, c := range []struct {
		name     string
		spec     bisectSpec
		sustains float64 // the true limit: rates at or under it sustain
		want     float64
		probed   []float64
	}{
		{"between the bounds", bisectSpec{lo: 2, hi: 16, steps: 3}, 7, 5.5, []float64{2, 16, 9, 5.5, 7.3}},
		{"a midpoint at the limit sustains", bisectSpec{lo: 2, hi: 16, steps: 3}, 7.3, 7.3, []float64{2, 16, 9, 5.5, 7.3}},
		{"hi sustains", bisectSpec{lo: 2, hi: 16, steps: 3}, 20, 16, []float64{2, 16}},
		{"lo backlogs", bisectSpec{lo: 2, hi: 16, steps: 3}, 1, 0, []float64{2}},
		{"no steps", bisectSpec{lo: 2, hi: 16}, 7, 2, []float64{2, 16}},
	} {
		got, probes, err := bisectRate(c.spec, func(rate float64) (probe, error) {
			return probe{rate: rate, backlog: rate > c.sustains}, nil
		})
		var probed []float64
		for _, p := range probes {
			probed = append(probed, p.rate)
		}
		if err != nil || got != c.want || !slices.Equal(probed, c.probed) {
			t.Errorf("%s: %v after %v (%v), want %v after %v", c.name, got, probed, err, c.want, c.probed)
		}
	}
}

func TestRenderBisect(t *testing.T) {
	s := time.Second
	r := bisectResult{spec: bisectSpec{lo: 2, hi: 16, steps: 1}, rate: 9, appFloor: 3 * s, operator: 5 * s,
		probes: []probe{{rate: 2, p99: s}, {rate: 16, p99: 40 * s, backlog: true}, {rate: 9, p99: 3 * s}}}
	out := renderBisect(r)
	for _, want := range []string{"| 16/s | 40.0 s | yes |", "Sustained: **9/s**",
		"p99 create→Ready 5000 ms, against the Application floor's 3000 ms + 1 s: **missed** by 1000 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	r.operator = 4 * s
	if out := renderBisect(r); !strings.Contains(out, "+ 1 s: met.") {
		t.Errorf("4 s against 3 s + 1 s is met:\n%s", out)
	}
	r.rate, r.probes = 0, r.probes[:1]
	if out := renderBisect(r); !strings.Contains(out, "No rate sustains") {
		t.Errorf("no rate: %s", out)
	}
}

func TestRateName(t *testing.T) {
	for rate, want := range map[float64]string{2: "2", 16: "16", 12.5: "12-5", 0.25: "0-25"} {
		if got := rateName(rate); got != want {
			t.Errorf("rateName(%g) = %q; want %q", rate, got, want)
		}
		if errs := validation.IsDNS1123Label("bench-steady-op-" + rateName(rate)); len(errs) > 0 {
			t.Errorf("the namespace of %g/s: %v", rate, errs)
		}
	}
}

func TestOverloaded(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a request timed out", apierrors.NewTimeoutError("request did not complete within requested timeout", 0), true},
		{"wrapped", fmt.Errorf("creating: %w", apierrors.NewTimeoutError("request did not complete", 0)), true},
		{"a server timeout", apierrors.NewServerTimeout(schema.GroupResource{Resource: "applications"}, "create", 1), true},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), true},
		{"a conflict", apierrors.NewConflict(schema.GroupResource{Resource: "applications"}, "a", errors.New("x")), false},
		{"another error", errors.New("connection refused"), false},
	} {
		if got := overloaded(c.err); got != c.want {
			t.Errorf("%s: overloaded = %v, want %v", c.name, got, c.want)
		}
	}
}
