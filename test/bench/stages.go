package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// stage is one step of an item's way from its create to Ready, as the
// benchmark's watches see it.
type stage int

const (
	stageCreated stage = iota
	stageAppSeen
	stageDeployment
	stageReplicaSet
	stagePod
	stageScheduled
	stagePodReady
	stageAvailable
	stageReady
	numStages
)

// stageNames name each stage and who moves an item out of the stage before
// it, so the stage that holds the time names the component to look at.
var stageNames = [numStages]string{
	stageCreated:    "create request sent (benchmark)",
	stageAppSeen:    "Application seen by a watch (kube-apiserver)",
	stageDeployment: "Deployment created (the controller's first reconcile; the floor's client)",
	stageReplicaSet: "ReplicaSet created (kube-controller-manager: deployment controller)",
	stagePod:        "Pod created (kube-controller-manager: replicaset controller)",
	stageScheduled:  "Pod scheduled (kube-scheduler)",
	stagePodReady:   "Pod Ready (kwok)",
	stageAvailable:  "Deployment available (kube-controller-manager: deployment controller)",
	stageReady:      "Application Ready written (the controller's reconcile of the Deployment's status)",
}

// stageRecorder keeps, for every item, when each stage was first seen.
type stageRecorder struct {
	mu sync.Mutex
	at map[string]*[numStages]time.Time
}

func newStageRecorder() *stageRecorder {
	return &stageRecorder{at: map[string]*[numStages]time.Time{}}
}

// mark records that item reached s at t, unless an earlier time is known.
func (r *stageRecorder) mark(item string, s stage, t time.Time) {
	if item == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	times := r.at[item]
	if times == nil {
		times = &[numStages]time.Time{}
		r.at[item] = times
	}
	if times[s].IsZero() || t.Before(times[s]) {
		times[s] = t
	}
}

// watch follows the Deployments, ReplicaSets and Pods of the namespaces of
// ns (and their Applications when apps is set) until ctx ends. ReplicaSets
// and Pods are matched to their item by the benchmark's `app` label.
func (r *stageRecorder) watch(ctx context.Context, c client.WithWatch, ns spread, apps bool) error {
	item := func(o client.Object) string { return o.GetLabels()["app"] }
	if apps {
		if err := watchEach(ctx, c, ns, &sunappsv1.ApplicationList{}, func(_ watch.EventType, o client.Object, t time.Time) {
			r.mark(o.GetName(), stageAppSeen, t)
		}); err != nil {
			return err
		}
	}
	if err := watchEach(ctx, c, ns, &appsv1.DeploymentList{}, func(_ watch.EventType, o client.Object, t time.Time) {
		r.mark(o.GetName(), stageDeployment, t)
		if deploymentAvailable(o) {
			r.mark(o.GetName(), stageAvailable, t)
		}
	}); err != nil {
		return err
	}
	if err := watchEach(ctx, c, ns, &appsv1.ReplicaSetList{}, func(_ watch.EventType, o client.Object, t time.Time) {
		r.mark(item(o), stageReplicaSet, t)
	}); err != nil {
		return err
	}
	return watchEach(ctx, c, ns, &corev1.PodList{}, func(_ watch.EventType, o client.Object, t time.Time) {
		pod := o.(*corev1.Pod)
		r.mark(item(pod), stagePod, t)
		if pod.Spec.NodeName != "" {
			r.mark(item(pod), stageScheduled, t)
		}
		for _, cond := range pod.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				r.mark(item(pod), stagePodReady, t)
			}
		}
	})
}

// stageSummary is, per stage, the p50 and p99 over the items of the time
// from the item's previous seen stage, and the p50 of the time from create.
type stageSummary struct {
	variant string
	n       int
	step    [numStages]struct{ p50, p99, since time.Duration }
	seen    [numStages]int
	// last is when the last item reached each stage, from the first
	// create: how the burst's end is spent (the last Ready is its
	// convergence; the gap between the last Deployment available and the
	// last Ready is the controller's own tail).
	last [numStages]time.Duration
}

// summarize merges the tracker's create and Ready times into the recorded
// stages, Ready as the stage ready (stageReady for an Application Ready and
// mirroring an available Deployment, stageAvailable for the floor's
// Deployment), and summarizes them.
func (r *stageRecorder) summarize(t *tracker, variant string, n int, ready stage) stageSummary {
	t.mu.Lock()
	for name, at := range t.created {
		r.mark(name, stageCreated, at)
	}
	for name, at := range t.ready {
		r.mark(name, ready, at)
	}
	t.mu.Unlock()

	r.mu.Lock()
	defer r.mu.Unlock()
	s := stageSummary{variant: variant, n: n}
	var steps, since [numStages][]time.Duration
	var first time.Time
	var last [numStages]time.Time
	for _, times := range r.at {
		created := times[stageCreated]
		if created.IsZero() {
			continue // an object of an earlier run
		}
		if first.IsZero() || created.Before(first) {
			first = created
		}
		prev := created
		for st := stageCreated + 1; st < numStages; st++ {
			if times[st].IsZero() {
				continue
			}
			steps[st] = append(steps[st], max(0, times[st].Sub(prev)))
			since[st] = append(since[st], times[st].Sub(created))
			prev = times[st]
			if times[st].After(last[st]) {
				last[st] = times[st]
			}
		}
	}
	for st := range numStages {
		if !last[st].IsZero() {
			s.last[st] = last[st].Sub(first)
		}
	}
	for st := range numStages {
		slices.Sort(steps[st])
		slices.Sort(since[st])
		s.seen[st] = len(steps[st])
		s.step[st].p50, s.step[st].p99 = percentile(steps[st], 0.5), percentile(steps[st], 0.99)
		s.step[st].since = percentile(since[st], 0.5)
	}
	return s
}

// renderStages tabulates the stage summaries of every variant: where an
// item's time from create to Ready goes, then when the last item reached
// each stage.
func renderStages(sums []stageSummary) string {
	if len(sums) == 0 {
		return ""
	}
	var sb strings.Builder
	stageTable(&sb, sums, "Where create→Ready goes, per item: each stage's time from the item's previous stage, "+
		"p50 / p99 (and p50 since create), as the benchmark's watches saw it:", func(s stageSummary, st stage) string {
		return fmt.Sprintf("%s / %s (%s)", dur(s.step[st].p50), dur(s.step[st].p99), dur(s.step[st].since))
	})
	sb.WriteString("\n")
	stageTable(&sb, sums, "When the last item reached each stage, from the variant's first create (the last row is "+
		"its convergence; the gap from the row before it is the controller's own tail):",
		func(s stageSummary, st stage) string { return dur(s.last[st]) })
	return strings.TrimSuffix(sb.String(), "\n")
}

// stageTable writes title and a table of one row per stage, one column per
// summary, each cell from cell ("-" where the stage was not seen).
func stageTable(sb *strings.Builder, sums []stageSummary, title string, cell func(stageSummary, stage) string) {
	sb.WriteString(title + "\n\n| stage |")
	names := make([]result, len(sums))
	for i, s := range sums {
		names[i] = result{n: s.n, variant: s.variant}
	}
	for _, r := range numberRuns(names) {
		fmt.Fprintf(sb, " %s N=%d |", r.name(), r.n)
	}
	sb.WriteString("\n|---|" + strings.Repeat("---:|", len(sums)) + "\n")
	for st := stageCreated + 1; st < numStages; st++ {
		fmt.Fprintf(sb, "| %s |", stageNames[st])
		for _, s := range sums {
			if s.seen[st] == 0 {
				sb.WriteString(" - |")
				continue
			}
			sb.WriteString(" " + cell(s, st) + " |")
		}
		sb.WriteString("\n")
	}
}
