package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// stage is a step between kubectl apply and the first answer, timed from
// the apply's start when this process first saw it.
type stage int

const (
	// stageService: the Service has a ClusterIP (polled every 20 ms).
	stageService stage = iota
	// stagePodCreated: a watch delivered the Pod.
	stagePodCreated
	// stagePodReady: a watch delivered the Pod with Ready true (the
	// kubelet's readiness probe passed).
	stagePodReady
	// stageEndpoint: a watch delivered an EndpointSlice of the Service with
	// a ready endpoint (kube-proxy programs the rules from it).
	stageEndpoint
	// stageAnswer: the first HTTP 200 through the ClusterIP.
	stageAnswer
	stages
)

var stageNames = [stages]string{
	stageService:    "Service has a ClusterIP",
	stagePodCreated: "Pod created",
	stagePodReady:   "Pod Ready",
	stageEndpoint:   "ready endpoint in the Service's EndpointSlice",
	stageAnswer:     "first HTTP 200 (kube-proxy's rules in place)",
}

// timing is one run's stages; 0 where a stage was not seen.
type timing [stages]time.Duration

// firstRun is one run of apply → first answer: its stages, and whether
// a readiness probe of its Pod failed before the first answer.
type firstRun struct {
	timing
	probeFailed bool
}

func (r firstRun) String() string { return r.timing.String() + failedMark(r.probeFailed) }

// failedMark is what the progress log adds to a run whose probe failed.
func failedMark(failed bool) string {
	if failed {
		return "; a readiness probe failed"
	}
	return ""
}

// probes are the runs' times to their first answer with their probe
// failures.
func probes(runs []firstRun) []probed {
	out := make([]probed, 0, len(runs))
	for _, r := range runs {
		out = append(out, probed{took: r.timing[stageAnswer], failed: r.probeFailed})
	}
	return out
}

// clock records, once each, when stages are first seen.
type clock struct {
	start time.Time
	mu    sync.Mutex
	t     timing
}

// begin starts the clock: nothing is marked before.
func (c *clock) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start = time.Now()
}

func (c *clock) mark(s stage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.start.IsZero() && c.t[s] == 0 {
		c.t[s] = time.Since(c.start)
	}
}

func (c *clock) timing() timing {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// watchStages watches the namespace's Pods and the EndpointSlices of the
// Service name until ctx ends and marks their stages on c. The watches are
// open when it returns.
func watchStages(ctx context.Context, cs kubernetes.Interface, ns, name string, c *clock) error {
	pods, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	eps, err := cs.DiscoveryV1().EndpointSlices(ns).Watch(ctx,
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		pods.Stop()
		return err
	}
	follow := func(w watch.Interface, seen func(any)) {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					seen(ev.Object)
				}
			}
		}
	}
	go follow(pods, func(o any) {
		pod, ok := o.(*corev1.Pod)
		if !ok {
			return
		}
		c.mark(stagePodCreated)
		for _, cond := range pod.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				c.mark(stagePodReady)
			}
		}
	})
	go follow(eps, func(o any) {
		slice, ok := o.(*discoveryv1.EndpointSlice)
		if !ok {
			return
		}
		for _, ep := range slice.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				c.mark(stageEndpoint)
			}
		}
	})
	return nil
}

// renderStages tabulates, per variant, each stage's p50 and max since the
// apply's start.
func renderStages(app, dir []firstRun) string {
	var sb strings.Builder
	sb.WriteString("Where the time goes: each stage's time since `kubectl apply` started, p50 / max over the " +
		"runs, as this process first saw it (the Service polled, the Pods and EndpointSlices watched).\n\n" +
		"| stage | Application p50 / max | direct p50 / max |\n|---|---:|---:|\n")
	for s := range stages {
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", stageNames[s], stageCell(app, s), stageCell(dir, s))
	}
	return sb.String()
}

// stageCell is stage s's p50 / max over runs.
func stageCell(runs []firstRun, s stage) string {
	var ds []time.Duration
	for _, r := range runs {
		if r.timing[s] > 0 {
			ds = append(ds, r.timing[s])
		}
	}
	if len(ds) == 0 {
		return "-"
	}
	sum := summarize(ds)
	cell := secs(sum.p50) + " / " + secs(sum.max)
	if len(ds) < len(runs) {
		cell += fmt.Sprintf(" (seen in %d of %d)", len(ds), len(runs))
	}
	return cell
}

// String prints a run's stages on one line, for the progress log.
func (t timing) String() string {
	parts := make([]string, 0, stages)
	for s := range stages {
		parts = append(parts, fmt.Sprintf("%.2f", t[s].Seconds()))
	}
	return "stages (s): " + strings.Join(parts, " / ")
}

// answers are the runs' times to their first answer.
func answers(runs []firstRun) []time.Duration {
	out := make([]time.Duration, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.timing[stageAnswer])
	}
	return out
}
