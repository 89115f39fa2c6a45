package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runName and changeName name the objects of pair i's run of v: the
// Deployment (the Application's child too) and the Service, and so the
// prefix of its Pods' names.
func runName(v variant, i int) string    { return fmt.Sprintf("%s-%d", v.prefix(), i) }
func changeName(v variant, i int) string { return fmt.Sprintf("%s-change-%d", v.prefix(), i) }

// probeFailed says whether the kubelet recorded a failed probe (an Event
// of reason Unhealthy) for a Pod of the run name, other than those in
// before (a spec change's v1 Pods). It is asked once the run is measured
// and before its Pods are deleted (a terminating Pod's readiness fails on
// purpose: the app drains): a failure then is a probe that came before
// the app listened, after which the next comes a period (1 s) later.
func (b *bench) probeFailed(ctx context.Context, name string, before []string) (bool, error) {
	events, err := b.cs.CoreV1().Events(b.cfg.namespace).List(ctx,
		metav1.ListOptions{FieldSelector: "reason=Unhealthy"})
	if err != nil {
		return false, err
	}
	return unhealthy(events.Items, name, before), nil
}

// unhealthy is whether events hold a failed probe of a Pod of the run
// name (its Pods are named after its Deployment and a dash) not in before.
func unhealthy(events []corev1.Event, name string, before []string) bool {
	for _, e := range events {
		pod := e.InvolvedObject.Name
		if e.Reason == "Unhealthy" && e.InvolvedObject.Kind == "Pod" && strings.HasPrefix(pod, name+"-") &&
			!slices.Contains(before, pod) {
			return true
		}
	}
	return false
}

// probed is one run's figure and whether a probe of its Pods failed.
type probed struct {
	took   time.Duration
	failed bool
}

// renderProbes says in how many runs of each variant a readiness probe
// failed before the run was measured, and those runs' figures.
func renderProbes(what string, app, dir []probed) string {
	cell := func(runs []probed) string {
		var took []string
		for _, r := range runs {
			if r.failed {
				took = append(took, secs(r.took))
			}
		}
		s := fmt.Sprintf("%d of %d", len(took), len(runs))
		if len(took) > 0 {
			s += " (" + strings.Join(took, ", ") + ")"
		}
		return s
	}
	return fmt.Sprintf("Runs with a failed readiness probe before they were measured (the kubelet's Unhealthy "+
		"Events), %s: Application %s; direct %s.\n", what, cell(app), cell(dir))
}
