package main

import (
	"strings"
	"testing"
	"time"
)

func TestClockMarksEachStageOnceAfterItBegins(t *testing.T) {
	c := &clock{}
	c.mark(stagePodCreated)
	if c.timing()[stagePodCreated] != 0 {
		t.Errorf("marked before the clock began: %v", c.timing())
	}
	c.begin()
	time.Sleep(2 * time.Millisecond)
	c.mark(stagePodCreated)
	first := c.timing()[stagePodCreated]
	time.Sleep(2 * time.Millisecond)
	c.mark(stagePodCreated)
	if first <= 0 || c.timing()[stagePodCreated] != first {
		t.Errorf("stage marked %s, then %s: want the first mark kept", first, c.timing()[stagePodCreated])
	}
}

func TestRenderStages(t *testing.T) {
	run := func(answer time.Duration, podReady time.Duration) firstRun {
		var r timing
		r[stageService] = 100 * time.Millisecond
		r[stagePodCreated] = 300 * time.Millisecond
		r[stagePodReady] = podReady
		r[stageEndpoint] = podReady + 20*time.Millisecond
		r[stageAnswer] = answer
		return firstRun{timing: r}
	}
	app := []firstRun{run(1200*time.Millisecond, time.Second), run(2200*time.Millisecond, 2*time.Second)}
	dir := []firstRun{run(1300*time.Millisecond, 1100*time.Millisecond),
		{timing: timing{stageAnswer: 1250 * time.Millisecond}}}
	out := renderStages(app, dir)
	for _, want := range []string{
		"| stage | Application p50 / max | direct p50 / max |",
		"| Pod Ready | 1.00 s / 2.00 s | 1.10 s / 1.10 s (seen in 1 of 2) |",
		"| first HTTP 200 (kube-proxy's rules in place) | 1.20 s / 2.20 s | 1.25 s / 1.30 s |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("renderStages lacks %q:\n%s", want, out)
		}
	}
	if got := answers(app); len(got) != 2 || got[1] != 2200*time.Millisecond {
		t.Errorf("answers = %v", got)
	}
	if s := run(time.Second, time.Second).String(); s != "stages (s): 0.10 / 0.30 / 1.00 / 1.02 / 1.00" {
		t.Errorf("String = %q", s)
	}
}
