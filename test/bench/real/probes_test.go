package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestRunNames(t *testing.T) {
	if got := runName(application, 3); got != "bench-app-3" {
		t.Errorf("runName = %q", got)
	}
	if got := changeName(direct, 2); got != "bench-direct-change-2" {
		t.Errorf("changeName = %q", got)
	}
}

func TestUnhealthy(t *testing.T) {
	event := func(reason, kind, name string) corev1.Event {
		return corev1.Event{Reason: reason, InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}}
	}
	events := []corev1.Event{
		event("Unhealthy", "Pod", "bench-app-20-6d77d5ddd9-abcde"),       // pair 20's, not pair 2's
		event("Unhealthy", "Pod", "bench-app-change-2-7e88e6eee1-fghij"), // a spec change's
		event("Unhealthy", "Pod", "bench-direct-2-5c66c4ccc8-klmno"),     // the other variant's
		event("Killing", "Pod", "bench-app-3-5c66c4ccc8-kwln2"),          // not a probe
	}
	if unhealthy(events, "bench-app-2", nil) || unhealthy(events, "bench-app-3", nil) {
		t.Errorf("another run's probe, or another reason, counted")
	}
	for _, name := range []string{"bench-app-20", "bench-app-change-2", "bench-direct-2"} {
		if !unhealthy(events, name, nil) {
			t.Errorf("the failed probe of %s not counted", name)
		}
	}
	// A spec change's v1 Pods are not its v2 Pods.
	if unhealthy(events, "bench-app-change-2", []string{"bench-app-change-2-7e88e6eee1-fghij"}) {
		t.Errorf("a v1 Pod's probe counted")
	}
}

func TestProbes(t *testing.T) {
	runs := []firstRun{{timing: timing{stageAnswer: time.Second}}, {timing: timing{stageAnswer: 2 * time.Second},
		probeFailed: true}}
	want := []probed{{took: time.Second}, {took: 2 * time.Second, failed: true}}
	if got := probes(runs); !slices.Equal(got, want) {
		t.Errorf("probes = %+v, want %+v", got, want)
	}
	changes := []change{{settled: 3 * time.Second, probeFailed: true}, {settled: 2 * time.Second}}
	want = []probed{{took: 3 * time.Second, failed: true}, {took: 2 * time.Second}}
	if got := changeProbes(changes); !slices.Equal(got, want) {
		t.Errorf("changeProbes = %+v, want %+v", got, want)
	}
	if s := runs[1].String(); !strings.HasSuffix(s, "; a readiness probe failed") {
		t.Errorf("String = %q", s)
	}
}

func TestRenderProbes(t *testing.T) {
	out := renderProbes("apply → first answer",
		[]probed{{took: 1200 * time.Millisecond}, {took: 2210 * time.Millisecond, failed: true}},
		[]probed{{took: 1250 * time.Millisecond}})
	want := "apply → first answer: Application 1 of 2 (2.21 s); direct 0 of 1."
	if !strings.Contains(out, want) {
		t.Errorf("renderProbes = %q, want it to contain %q", out, want)
	}
}
