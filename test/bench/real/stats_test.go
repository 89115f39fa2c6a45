package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, 0, len(v))
	for _, x := range v {
		out = append(out, time.Duration(x)*time.Millisecond)
	}
	return out
}

// oneTo is 1, 2, ..., n ms.
func oneTo(n int) []time.Duration {
	out := make([]time.Duration, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, time.Duration(i)*time.Millisecond)
	}
	return out
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"p50 of 20 is the 10th", oneTo(20), 0.50, 10 * time.Millisecond},
		{"p99 of 20 is the max", oneTo(20), 0.99, 20 * time.Millisecond},
		{"p99 of 99 is the max", oneTo(99), 0.99, 99 * time.Millisecond},
		{"p99 of 100 is the 99th", oneTo(100), 0.99, 99 * time.Millisecond},
		{"p99 of 200 is the 198th", oneTo(200), 0.99, 198 * time.Millisecond},
		{"p50 of 3 is the middle", ms(1, 2, 3), 0.50, 2 * time.Millisecond},
		{"p50 of 2 is the lower", ms(1, 2), 0.50, 1 * time.Millisecond},
		{"p100 is the max", ms(1, 2, 3), 1, 3 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %g) = %s, want %s", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarizeDoesNotReorderItsInput(t *testing.T) {
	runs := ms(300, 100, 200)
	s := summarize(runs)
	want := summary{n: 3, p50: 200 * time.Millisecond, p99: 300 * time.Millisecond,
		min: 100 * time.Millisecond, max: 300 * time.Millisecond}
	if s != want {
		t.Errorf("summarize = %+v, want %+v", s, want)
	}
	if !slices.Equal(runs, ms(300, 100, 200)) {
		t.Errorf("summarize reordered its input: %v", runs)
	}
	if summarize(nil) != (summary{}) {
		t.Errorf("summarize(nil) = %+v", summarize(nil))
	}
}

func TestVerdict(t *testing.T) {
	sec := func(d time.Duration) summary { return summary{n: 20, p99: d} }
	for _, tc := range []struct {
		name      string
		app, dir  summary
		wantStart string
	}{
		{"faster", sec(2 * time.Second), sec(3 * time.Second), "met"},
		{"equal", sec(3 * time.Second), sec(3 * time.Second), "met"},
		{"on the limit", sec(3500 * time.Millisecond), sec(3 * time.Second), "met"},
		{"1 ms over", sec(3501 * time.Millisecond), sec(3 * time.Second), "**missed** by 1 ms"},
		{"a fraction of a ms over", sec(3500*time.Millisecond + time.Microsecond), sec(3 * time.Second),
			"**missed** by 1 ms"},
		{"over", sec(4250 * time.Millisecond), sec(3 * time.Second), "**missed** by 0.75 s"},
		{"no run", summary{}, sec(3 * time.Second), "no verdict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := verdict(tc.app, tc.dir); !strings.HasPrefix(got, tc.wantStart) {
				t.Errorf("verdict(%s, %s) = %q, want %q", tc.app.p99, tc.dir.p99, got, tc.wantStart)
			}
		})
	}
}

func TestSettled(t *testing.T) {
	at := func(i int) time.Duration { return time.Duration(i) * 20 * time.Millisecond }
	// answers builds a sequence: v1 for '1', v2 for '2', a failure for 'x'.
	answers := func(s string) []answer {
		out := make([]answer, 0, len(s))
		for i, c := range s {
			body := map[rune]string{'1': "v1", '2': "v2", 'x': ""}[c]
			out = append(out, answer{at: at(i), body: body})
		}
		return out
	}
	v2s := strings.Repeat("2", settleStreak)
	for _, tc := range []struct {
		name   string
		seq    string
		want   time.Duration
		wantOK bool
	}{
		{"nothing yet", "", 0, false},
		{"only v1", "111111", 0, false},
		{"one short of the streak", strings.Repeat("2", settleStreak-1), 0, false},
		{"only v2 from the start", v2s, 0, true},
		{"v1 then v2", "1111" + v2s, at(4), true},
		{"mixed, then v2", "1212x21" + v2s, at(7), true},
		{"a failure breaks the streak", "11" + v2s[:5] + "x" + v2s, at(8), true},
		{"a v1 at the end is not settled", v2s + "1", 0, false},
		{"a longer streak is timed from its first answer", "1" + v2s + v2s, at(1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := settled(answers(tc.seq), "v2")
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("settled(%q) = %s, %t, want %s, %t", tc.seq, got, ok, tc.want, tc.wantOK)
			}
		})
	}
	if n := failures(answers("1x2xx2")); n != 3 {
		t.Errorf("failures = %d, want 3", n)
	}
}

func TestOrderAlternates(t *testing.T) {
	for i, want := range map[int][]variant{
		1: {application, direct}, 2: {direct, application}, 3: {application, direct}, 20: {direct, application},
	} {
		if got := order(i); !slices.Equal(got, want) {
			t.Errorf("order(%d) = %v, want %v", i, got, want)
		}
	}
}

func TestRenderFirst(t *testing.T) {
	app := oneTo(20)
	for i := range app {
		app[i] = 2*time.Second + app[i]*10
	}
	dir := ms(1800, 1900, 2000)
	out := renderFirst(app, dir)
	for _, want := range []string{
		"| variant | runs | p50 | p99 (= max: n < 100) | min | max |",
		"| Application | 20 | 2.10 s | 2.20 s | 2.01 s | 2.20 s |",
		"| Deployment + Service (direct) | 3 | 1.90 s | 2.00 s | 1.80 s | 2.00 s |",
		"Application p99 − direct p99: +0.20 s. Target, Application p99 ≤ direct p99 + 0.50 s: met.",
		"direct 1.80, 1.90, 2.00.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("renderFirst lacks %q:\n%s", want, out)
		}
	}
	if out := renderFirst(ms(3000), ms(2000)); !strings.Contains(out, "+1.00 s. Target, Application p99 ≤ direct p99 "+
		"+ 0.50 s: **missed** by 0.50 s.") {
		t.Errorf("3 s against 2 s + 0.5 s is missed by 0.5 s:\n%s", out)
	}
}

func TestRenderChanges(t *testing.T) {
	app := []change{{settled: 5 * time.Second, requests: 300, failed: 0}, {settled: 7 * time.Second, requests: 400}}
	dir := []change{{settled: 4 * time.Second, requests: 250, failed: 2}}
	out := renderChanges(app, dir)
	for _, want := range []string{
		"| variant | runs | p50 | max | min | failed requests (of) |",
		"| Application | 2 | 5.00 s | 7.00 s | 5.00 s | 0 (700) |",
		"| Deployment + Service (direct) | 1 | 4.00 s | 4.00 s | 4.00 s | 2 (250) |",
		"Application p50 − direct p50: +1.00 s.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("renderChanges lacks %q:\n%s", want, out)
		}
	}
}

func TestSignedSecs(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "+0.00 s", 120 * time.Millisecond: "+0.12 s", -50 * time.Millisecond: "-0.05 s",
	} {
		if got := signedSecs(d); got != want {
			t.Errorf("signedSecs(%s) = %q, want %q", d, got, want)
		}
	}
}
