package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sunstrider.cn/operator/internal/controller/apps"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// The steady-rate mode (-rates): bursts measure throughput, users feel
// latency at a steady rate. On a cluster already holding -base converged
// Applications, for each rate it creates Applications open-loop (one create
// every 1/rate, whatever the cluster answers) for -rate-window, then the
// floor's Deployments and Services at the same rate, and reports the
// create→Ready latencies of both side by side; then it changes the spec of
// every object it created, at the same rate, and reports how long the
// change takes to reach the Deployment and Ready. With -webhooks-off, the
// operator then does the same again with its admission webhooks off: the
// webhooks' share of its cost at that rate. Last (-app-floor), with
// the operator stopped, the Application floor's creates at each rate: the
// Application API's own cost, which no controller of it can go below.

// updatedImage is what the steady-rate mode's spec change sets.
const updatedImage = "nginx:1.15.0"

// steadyResult is one rate's figures.
type steadyResult struct {
	rate                 float64
	items                int
	operator, floor      latencies
	opBacklog, flBacklog bool
	// appFloor is the Application floor at the same rate (appfloor.go: the
	// Application API's own writes, no controller), run after the operator
	// is stopped; nil when it did not run.
	appFloor *appFloorAtRate
	// change is the Application spec changes at this rate, and floorUpdate
	// a floor Deployment's update → rolled out and available.
	change      specChange
	floorUpdate latencies
	// noWebhooks is the operator with its webhooks off (-webhooks-off), in
	// a run of its own after the operator's; nil when it did not run.
	noWebhooks *withoutWebhooks
	// rollout is what the Application spec changes cost in status writes
	// (rollout.go).
	rollout rolloutSummary
	// stages are where the operator's and the floor's creates at this rate
	// spent their time (stages.go): which stage holds the tail.
	stages []stageSummary
	// cpu is where the machine's CPU went in each phase at this rate.
	cpu []phaseCPU
	// busy says why the rate's figures compare with nothing: a phase
	// started on a busy machine (bench.settle).
	busy []string
}

// appFloorAtRate is the Application floor's creates at one rate, their
// create→Ready and whether they backlogged, and its spec changes.
type appFloorAtRate struct {
	creates latencies
	backlog bool
	// change is its spec change → Ready with the new generation (its
	// patch, its Deployment's, one status write once rolled out): what the
	// operator's changes take over the Application API's own writes. nil
	// when it made none (the bisect's probes).
	change *latencies
}

// afChange is r's Application floor spec changes, nil when none ran.
func (r steadyResult) afChange() *latencies {
	if r.appFloor == nil {
		return nil
	}
	return r.appFloor.change
}

// withoutWebhooks is the operator's creates and spec changes at one rate
// with its admission webhooks off: against the operator's, the webhooks'
// share. busy says why it compares with nothing (it started on a busy
// machine).
type withoutWebhooks struct {
	creates latencies
	backlog bool
	change  specChange
	busy    string
}

// latencies are the p50, p90 and p99 of a set of durations.
type latencies struct{ p50, p90, p99 time.Duration }

func summarizeLatencies(sorted []time.Duration) latencies {
	return latencies{percentile(sorted, 0.5), percentile(sorted, 0.9), percentile(sorted, 0.99)}
}

// backlogged tells whether latencies, in creation order, grew over the
// window: the median of the last fifth more than 1 s and 50 % above the
// median of the first fifth. An open-loop client at a rate the system
// sustains sees flat latencies; above it, a queue builds and they grow.
func backlogged(inOrder []time.Duration) bool {
	k := len(inOrder) / 5
	if k == 0 {
		return false
	}
	first := sortedCopy(inOrder[:k])
	last := sortedCopy(inOrder[len(inOrder)-k:])
	a, b := percentile(first, 0.5), percentile(last, 0.5)
	return b > a+time.Second && float64(b) > 1.5*float64(a)
}

func sortedCopy(d []time.Duration) []time.Duration {
	out := append([]time.Duration(nil), d...)
	slices.Sort(out)
	return out
}

// openLoop calls do(i) for i = 0..n-1, one call every 1/rate seconds, each
// in its own goroutine (a slow answer does not delay the next call), and
// waits for them all. It returns the first error.
func openLoop(ctx context.Context, rate float64, n int, do func(ctx context.Context, i int) error) error {
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			select {
			case <-ctx.Done():
				wg.Wait()
				return ctx.Err()
			case <-time.After(d):
			}
		}
		wg.Go(func() {
			if err := do(ctx, i); err != nil {
				once.Do(func() { first = err })
			}
		})
	}
	wg.Wait()
	return first
}

// createdInOrder returns the create→ready latencies of t's items in
// creation order (itemName order).
func (t *tracker) createdInOrder(n int) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Duration, 0, n)
	for i := range n {
		c, ok1 := t.created[itemName(i)]
		r, ok2 := t.ready[itemName(i)]
		if ok1 && ok2 {
			out = append(out, r.Sub(c))
		}
	}
	return out
}

// runSteady is the steady-rate mode: base converged Applications, then
// each rate in turn.
func (b *bench) runSteady(ctx context.Context) ([]steadyResult, error) {
	cfg := b.cfg
	window := cfg.rateWindow
	most := 0
	for _, r := range cfg.rates {
		most = max(most, int(math.Ceil(r*window.Seconds())))
	}
	// Pods at once: the base, plus one rate's Applications and floor
	// Deployments, each surging to two Pods while the spec change rolls out.
	if err := ensurePodCapacity(ctx, b.c, cfg.base+4*most+1000); err != nil {
		return nil, err
	}
	if err := b.installOperatorConfig(ctx); err != nil {
		return nil, err
	}
	baseNS := "bench-steady-base"
	if err := createNamespace(ctx, b.c, baseNS); err != nil {
		return nil, err
	}
	p, err := b.startOperator(ctx, "steady")
	if err != nil {
		return nil, err
	}
	// p is the operator running, the restarted one after the steady cost.
	defer func() {
		if p != nil {
			p.stop()
		}
	}()

	if cfg.base > 0 {
		logf("steady: %d base Applications", cfg.base)
		t := newTracker(cfg.base)
		wctx, stop := context.WithCancel(ctx)
		if err := watchReady(wctx, b.c, single(baseNS), &sunappsv1.ApplicationList{}, applicationReady(true), t); err != nil {
			stop()
			return nil, err
		}
		err := createAll(ctx, cfg.base, t, func(ctx context.Context, i int) error {
			return b.c.Create(ctx, newApplication(baseNS, itemName(i)))
		})
		if err == nil {
			err = waitConverged(ctx, t, cfg.timeout, "base")
		}
		stop()
		if err != nil {
			return nil, err
		}
		logf("steady: the %d base Applications converged in %s", cfg.base, t.span().Round(time.Second))
	}
	if cfg.base > 0 && cfg.steadyIdle > 0 {
		if b.cost, p, err = b.measureSteadyCost(ctx, p, cfg.base); err != nil {
			return nil, err
		}
	}

	var results []steadyResult
	for _, rate := range cfg.rates {
		r, err := b.steadyRate(ctx, p, rate, int(math.Ceil(rate*window.Seconds())))
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	if w, err := p.writes(); err == nil {
		logf("steady: the operator made %d writes in all", w)
	}
	if cfg.webhooksOff {
		// The operator again at each rate, its webhooks off and their
		// configurations removed, as for the Application floor.
		p.stop()
		if err := b.installWithoutWebhooks(ctx); err != nil {
			return results, err
		}
		if p, err = b.startOperator(ctx, "steady-webhooks-off", "--enable-webhooks=false"); err != nil {
			return results, err
		}
		for i := range results {
			if err := b.steadyNoWebhooks(ctx, p, &results[i]); err != nil {
				return results, err
			}
		}
	}
	if cfg.references && cfg.appFloor {
		// The Application floor at each rate, on the same cluster (the base
		// stays), with no controller: what any controller of the
		// Application API cannot go below.
		p.stop()
		if err := b.installWithoutWebhooks(ctx); err != nil {
			return results, err
		}
		for i := range results {
			if err := b.steadyAppFloor(ctx, &results[i], true); err != nil {
				return results, err
			}
		}
	}
	if cfg.bisect.hi > 0 {
		p.stop()
		b.bisected, err = b.runBisect(ctx, cfg.bisect)
	}
	return results, err
}

// steadyAppFloor measures the Application floor at r's rate: r.items
// Applications created open-loop by its plain client, each with its
// children, and its status written when its Deployment is available; with
// changes, then each one's image changed at the same rate, its status
// written when its Deployment is rolled out.
func (b *bench) steadyAppFloor(ctx context.Context, r *steadyResult, changes bool) error {
	ns := appFloorNamespace(r.rate)
	if err := createNamespace(ctx, b.c, ns); err != nil {
		return err
	}
	if busy := b.settle(ctx, fmt.Sprintf("steady %g/s Application floor", r.rate), r.items); busy != "" {
		r.busy = append(r.busy, "Application floor: "+busy)
	}
	f, stop, err := startAppFloor(ctx, b.c, single(ns), r.items)
	if err != nil {
		return err
	}
	defer stop()
	stages := newStageRecorder()
	t, err := b.openLoopPhase(f.ctx, r, r.items, ns, "Application floor Applications", &sunappsv1.ApplicationList{},
		applicationReady(true), stages, func(ctx context.Context, i int) error { return f.create(ctx, ns, itemName(i)) })
	if err != nil {
		return f.failure(ctx, err)
	}
	af := &appFloorAtRate{creates: summarizeLatencies(t.latencies()), backlog: backlogged(t.createdInOrder(r.items))}
	r.appFloor = af
	r.stages = append(r.stages, stages.summarize(t, fmt.Sprintf("Application floor at %g/s", r.rate), r.items, stageReady))
	logf("steady %g/s: create→Ready p99 Application floor %s", r.rate, dur(af.creates.p99))
	if changes {
		t, err := b.openLoopPhase(f.ctx, r, r.items, ns, "Application floor spec changes", &sunappsv1.ApplicationList{},
			changedReady, nil, func(ctx context.Context, i int) error { return f.change(ctx, ns, itemName(i)) })
		if err != nil {
			return f.failure(ctx, err)
		}
		change := summarizeLatencies(t.latencies())
		af.change = &change
		logf("steady %g/s: spec change→Ready p99 Application floor %s", r.rate, dur(change.p99))
	}
	return deleteNamespace(ctx, b.c, ns)
}

// appFloorNamespace is the namespace of the Application floor's creates at
// rate.
func appFloorNamespace(rate float64) string { return "bench-steady-appfloor-" + rateName(rate) }

// steadyRate measures one rate: n creates of each variant, then n updates.
func (b *bench) steadyRate(ctx context.Context, p *proc, rate float64, n int) (steadyResult, error) {
	res := steadyResult{rate: rate, items: n}
	opNS, flNS := "bench-steady-op-"+rateName(rate), "bench-steady-floor-"+rateName(rate)
	for _, ns := range []string{opNS, flNS} {
		if err := createNamespace(ctx, b.c, ns); err != nil {
			return res, err
		}
	}
	if busy := b.settle(ctx, fmt.Sprintf("steady %g/s", rate), n); busy != "" {
		res.busy = append(res.busy, busy)
	}

	// Applications at the rate.
	var err error
	res.operator, res.opBacklog, err = b.operatorCreates(ctx, &res, opNS, "Applications (operator)", "operator")
	if err != nil {
		return res, err
	}

	// The floor's Deployments and Services at the same rate.
	stages := newStageRecorder()
	t, err := b.openLoopPhase(ctx, &res, n, flNS, "floor Deployments and Services", &appsv1.DeploymentList{},
		deploymentAvailable, stages, func(ctx context.Context, i int) error {
			for _, obj := range floorObjects(flNS, itemName(i)) {
				if err := b.c.Create(ctx, obj); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return res, err
	}
	res.floor, res.flBacklog = summarizeLatencies(t.latencies()), backlogged(t.createdInOrder(n))
	res.stages = append(res.stages, stages.summarize(t, fmt.Sprintf("floor at %g/s", rate), n, stageAvailable))

	// A spec change of every Application, at the same rate. The status
	// writes are followed until the floor's changes are done too, so that a
	// write after Ready (a flap) is seen.
	writes := newRolloutRecorder()
	writesCtx, stopWrites := context.WithCancel(ctx)
	defer stopWrites()
	if err := watchEach(writesCtx, b.c, single(opNS), &sunappsv1.ApplicationList{}, writes.seen); err != nil {
		return res, err
	}
	if res.change, err = b.specChanges(ctx, p, &res, opNS, "Application spec changes"); err != nil {
		return res, err
	}

	// The floor's Deployments changed the same way.
	t, err = b.openLoopPhase(ctx, &res, n, flNS, "floor Deployment spec changes", &appsv1.DeploymentList{},
		deploymentRolledOut, nil, func(ctx context.Context, i int) error {
			return b.c.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: flNS, Name: itemName(i)}},
				client.RawPatch(types.StrategicMergePatchType, deploymentImagePatch()))
		})
	if err != nil {
		return res, err
	}
	res.floorUpdate = summarizeLatencies(t.latencies())
	stopWrites()
	res.rollout = writes.summarize()
	logf("steady %g/s: %.2f status writes per spec change, Ready flapped for %d of %d", rate,
		res.rollout.writes, res.rollout.flapped, res.rollout.changes)
	logf("steady %g/s: create→Ready p99 operator %s, floor %s; spec change→Ready p99 operator %s, floor %s",
		rate, dur(res.operator.p99), dur(res.floor.p99), dur(res.change.ready.p99), dur(res.floorUpdate.p99))

	for _, ns := range []string{opNS, flNS} {
		if err := deleteNamespace(ctx, b.c, ns); err != nil {
			return res, err
		}
	}
	return res, nil
}

// operatorCreates creates res.items Applications in ns at res's rate (the
// phase what) for the operator to reconcile, records their stages as
// variant's, and returns their create→Ready latencies and whether they
// backlogged.
func (b *bench) operatorCreates(ctx context.Context, res *steadyResult, ns, what, variant string) (
	latencies, bool, error) {
	stages := newStageRecorder()
	t, err := b.openLoopPhase(ctx, res, res.items, ns, what, &sunappsv1.ApplicationList{},
		applicationReady(true), stages, func(ctx context.Context, i int) error {
			return b.c.Create(ctx, newApplication(ns, itemName(i)))
		})
	if err != nil {
		return latencies{}, false, err
	}
	label := fmt.Sprintf("%s at %g/s", variant, res.rate)
	res.stages = append(res.stages, stages.summarize(t, label, res.items, stageReady))
	return summarizeLatencies(t.latencies()), backlogged(t.createdInOrder(res.items)), nil
}

// specChange is how long an Application spec change took: to reach the
// Deployment (the operator's reconcile and apply), to be rolled out
// (kube-controller-manager), and to be reported Ready with the new
// generation (the operator's status write).
type specChange struct{ deployment, rolledOut, ready latencies }

// specChanges changes the image of every Application operatorCreates made
// in ns, at res's rate (the phase what): the new image reaches the
// Deployment (watched on the side), which rolls out, and the Application is
// Ready with the new generation. It logs what p's Application controller
// did meanwhile.
func (b *bench) specChanges(ctx context.Context, p *proc, res *steadyResult, ns, what string) (specChange, error) {
	n := res.items
	changed, rolled := newTracker(n), newTracker(n)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := watchReady(wctx, b.c, single(ns), &appsv1.DeploymentList{}, deploymentUpdated, changed); err != nil {
		return specChange{}, err
	}
	if err := watchReady(wctx, b.c, single(ns), &appsv1.DeploymentList{}, deploymentRolledOut, rolled); err != nil {
		return specChange{}, err
	}
	before, _ := p.metrics()
	t, err := b.openLoopPhase(ctx, res, n, ns, what, &sunappsv1.ApplicationList{},
		changedReady, nil, func(ctx context.Context, i int) error {
			now := time.Now()
			changed.markCreated(itemName(i), now)
			rolled.markCreated(itemName(i), now)
			return b.c.Patch(ctx, &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: itemName(i)}},
				client.RawPatch(types.MergePatchType, applicationImagePatch(itemName(i))))
		})
	if err != nil {
		return specChange{}, err
	}
	if after, merr := p.metrics(); merr == nil {
		logf("steady %g/s: the Application controller during the %s: %s", res.rate, what, reconcileCounts(before, after))
	}
	return specChange{
		deployment: summarizeLatencies(changed.latencies()),
		rolledOut:  summarizeLatencies(rolled.latencies()),
		ready:      summarizeLatencies(t.latencies()),
	}, nil
}

// changedReady is true once a changed Application is Ready with its new
// generation.
func changedReady(o client.Object) bool {
	app := o.(*sunappsv1.Application)
	return app.Generation > 1 && app.Status.ObservedGeneration >= app.Generation &&
		meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)
}

// steadyNoWebhooks measures the operator with its webhooks off (p, started
// so) at r's rate, in a namespace of its own: its creates and spec changes
// as steadyRate's, whose cost against the operator's is the admission
// webhooks' share.
func (b *bench) steadyNoWebhooks(ctx context.Context, p *proc, r *steadyResult) error {
	ns := "bench-steady-nowebhooks-" + rateName(r.rate)
	if err := createNamespace(ctx, b.c, ns); err != nil {
		return err
	}
	nw := &withoutWebhooks{busy: b.settle(ctx, fmt.Sprintf("steady %g/s operator, webhooks off", r.rate), r.items)}
	var err error
	if nw.creates, nw.backlog, err = b.operatorCreates(ctx, r, ns, "Applications (operator, webhooks off)",
		"operator, webhooks off"); err != nil {
		return err
	}
	if nw.change, err = b.specChanges(ctx, p, r, ns, "Application spec changes (webhooks off)"); err != nil {
		return err
	}
	r.noWebhooks = nw
	logf("steady %g/s: webhooks off: create→Ready p99 %s, spec change→Ready p99 %s", r.rate,
		dur(nw.creates.p99), dur(nw.change.ready.p99))
	return deleteNamespace(ctx, b.c, ns)
}

// reconcileCounts tells what the Application controller did between two
// scrapes of the operator's metrics: its reconciles by result, the items
// its queue put back to wait (errors and RequeueAfter alike), the
// operator's requests refused with a conflict, and its writes.
func reconcileCounts(before, after map[string]float64) string {
	delta := func(key string) float64 { return after[key] - before[key] }
	var parts []string
	for _, result := range []string{"success", "requeue_after", "requeue", "error"} {
		parts = append(parts, fmt.Sprintf("%s %.0f", result,
			delta(`controller_runtime_reconcile_total{controller="`+apps.ControllerName+`",result="`+result+`"}`)))
	}
	retries := `workqueue_retries_total{controller="` + apps.ControllerName + `",name="` + apps.ControllerName + `"}`
	parts = append(parts, fmt.Sprintf("retries %.0f", delta(retries)))
	conflicts, writes := 0.0, 0.0
	for key := range after {
		if !strings.HasPrefix(key, "rest_client_requests_total{") {
			continue
		}
		if strings.Contains(key, `code="409"`) {
			conflicts += delta(key)
		}
		for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if strings.Contains(key, `method="`+method+`"`) {
				writes += delta(key)
			}
		}
	}
	return strings.Join(append(parts, fmt.Sprintf("409s %.0f, writes %.0f", conflicts, writes)), ", ")
}

// openLoopPhase calls do for n items at res's rate, open-loop, each marked
// created just before its request, and waits until a watch of list in ns
// shows every item ready; it returns the tracker of the phase and adds to
// res.cpu the CPU each process used meanwhile. When stages is set it
// records, for the phase's duration, each item's stages in ns (its
// Applications' too when list holds Applications).
func (b *bench) openLoopPhase(ctx context.Context, res *steadyResult, n int, ns, what string, list client.ObjectList,
	ready func(client.Object) bool, stages *stageRecorder, do func(ctx context.Context, i int) error) (*tracker, error) {
	rate := res.rate
	logf("steady %g/s: %d %s, open-loop", rate, n, what)
	t := newTracker(n)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := watchReady(wctx, b.c, single(ns), list, ready, t); err != nil {
		return nil, err
	}
	if stages != nil {
		_, isApps := list.(*sunappsv1.ApplicationList)
		if err := stages.watch(wctx, b.c, single(ns), isApps); err != nil {
			return nil, err
		}
	}
	span, err := startCPU()
	if err != nil {
		return nil, err
	}
	if err := openLoop(ctx, rate, n, func(ctx context.Context, i int) error {
		t.markCreated(itemName(i), time.Now())
		return do(ctx, i)
	}); err != nil {
		return nil, err
	}
	if err := waitConverged(ctx, t, b.cfg.timeout, fmt.Sprintf("%s at %g/s", what, rate)); err != nil {
		return nil, err
	}
	cpu, err := span.phase(what)
	if err != nil {
		return nil, err
	}
	res.cpu = append(res.cpu, cpu)
	return t, nil
}

// applicationImagePatch is the merge patch that changes an Application's
// image (a merge patch replaces the containers list whole).
func applicationImagePatch(name string) []byte {
	containers := podTemplate(name).Spec.Containers
	containers[0].Image = updatedImage
	return mustJSON(nested(containers, "spec", "deployment", "template", "spec", "containers"))
}

// deploymentImagePatch is the strategic merge patch that changes the floor
// Deployment's image (containers are merged by name).
func deploymentImagePatch() []byte {
	containers := []map[string]string{{"name": podTemplate("").Spec.Containers[0].Name, "image": updatedImage}}
	return mustJSON(nested(containers, "spec", "template", "spec", "containers"))
}

// nested returns v at path in nested maps: {"a": {"b": v}} for path a, b.
func nested(v any, path ...string) any {
	for _, key := range slices.Backward(path) {
		v = map[string]any{key: v}
	}
	return v
}

func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

// deploymentUpdated is true once the Deployment's template has the new image.
func deploymentUpdated(o client.Object) bool {
	d := o.(*appsv1.Deployment)
	return len(d.Spec.Template.Spec.Containers) > 0 && d.Spec.Template.Spec.Containers[0].Image == updatedImage
}

// deploymentRolledOut is true once the Deployment with the new image is
// rolled out: every Pod updated and available, the old one gone.
func deploymentRolledOut(o client.Object) bool {
	d := o.(*appsv1.Deployment)
	return deploymentUpdated(d) && d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == 1 && d.Status.AvailableReplicas == 1 && d.Status.Replicas == 1
}

// renderSteady tabulates the steady-rate results.
func renderSteady(results []steadyResult, base int, window time.Duration) string {
	if len(results) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Steady rate: open-loop creates for %s on a cluster holding %d converged Applications; "+
		"create→Ready p50 / p90 / p99 (the floor: its Deployment available). \"backlog\": latency grew over the "+
		"window (the rate is above what it sustains).\n\n", window, base)
	appFloor := slices.ContainsFunc(results, func(r steadyResult) bool { return r.appFloor != nil })
	noWebhooks := slices.ContainsFunc(results, func(r steadyResult) bool { return r.noWebhooks != nil })
	sb.WriteString("| rate | items | operator p50 / p90 / p99 | floor p50 / p90 / p99 ")
	if appFloor {
		sb.WriteString("| Application floor p50 / p90 / p99 ")
	}
	if noWebhooks {
		sb.WriteString("| operator, webhooks off p50 / p90 / p99 ")
	}
	sb.WriteString("| operator p99 ≤ floor p99 + 1 s |\n|---:|---:|---:|---:|")
	if appFloor {
		sb.WriteString("---:|")
	}
	if noWebhooks {
		sb.WriteString("---:|")
	}
	sb.WriteString("---|\n")
	for _, r := range results {
		target := verdictMet
		switch {
		case len(r.busy) > 0:
			target = "no verdict: " + strings.Join(r.busy, "; ")
		case r.flBacklog:
			target = "floor backlogged: not applicable"
		case r.operator.p99 > r.floor.p99+time.Second:
			target = fmt.Sprintf("**missed** by %s", dur(r.operator.p99-r.floor.p99-time.Second))
		}
		fmt.Fprintf(&sb, "| %g/s | %d | %s%s | %s%s | ", r.rate, r.items, r.operator.String(),
			backlogMark(r.opBacklog), r.floor.String(), backlogMark(r.flBacklog))
		switch {
		case r.appFloor != nil:
			fmt.Fprintf(&sb, "%s%s | ", r.appFloor.creates.String(), backlogMark(r.appFloor.backlog))
		case appFloor:
			sb.WriteString("- | ")
		}
		switch {
		case r.noWebhooks != nil:
			nw := r.noWebhooks
			fmt.Fprintf(&sb, "%s%s%s | ", nw.creates.String(), backlogMark(nw.backlog), busyMark(nw.busy))
		case noWebhooks:
			sb.WriteString("- | ")
		}
		fmt.Fprintf(&sb, "%s |\n", target)
	}
	sb.WriteString("\nSpec changes at the same rate (a new image): p50 / p90 / p99.\n\n" +
		"| rate | Application update → Deployment updated | → Deployment rolled out " +
		"| → Application Ready with the new generation | floor: Deployment update → rolled out ")
	afChange := slices.ContainsFunc(results, func(r steadyResult) bool { return r.afChange() != nil })
	if afChange {
		sb.WriteString("| Application floor: update → Ready ")
	}
	if noWebhooks {
		sb.WriteString("| webhooks off: → Deployment updated | webhooks off: → Ready ")
	}
	sb.WriteString("|\n|---:|---:|---:|---:|---:|")
	if afChange {
		sb.WriteString("---:|")
	}
	if noWebhooks {
		sb.WriteString("---:|---:|")
	}
	sb.WriteString("\n")
	for _, r := range results {
		fmt.Fprintf(&sb, "| %g/s | %s | %s | %s | %s |", r.rate, r.change.deployment.String(),
			r.change.rolledOut.String(), r.change.ready.String(), r.floorUpdate.String())
		switch {
		case r.afChange() != nil:
			fmt.Fprintf(&sb, " %s |", r.afChange().String())
		case afChange:
			sb.WriteString(" - |")
		}
		switch {
		case r.noWebhooks != nil:
			nw := r.noWebhooks
			fmt.Fprintf(&sb, " %s | %s%s |", nw.change.deployment.String(), nw.change.ready.String(), busyMark(nw.busy))
		case noWebhooks:
			sb.WriteString(" - | - |")
		}
		sb.WriteString("\n")
	}
	sb.WriteString("\n" + renderChangeVerdicts(results) + "\n")
	var stages []stageSummary
	for _, r := range results {
		stages = append(stages, r.stages...)
	}
	if st := renderStages(stages); st != "" {
		sb.WriteString("\n" + st + "\n")
	}
	if cpu := renderPhaseCPU(results); cpu != "" {
		sb.WriteString("\n" + cpu + "\n")
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// renderPhaseCPU tabulates, for each phase of each rate, the machine's busy
// share and the cores each process used (its CPU seconds over the phase's
// wall time, first create to the last item ready): a rate that keeps the
// machine nearly busy lengthens every stage's tail, whoever's stage it is.
func renderPhaseCPU(results []steadyResult) string {
	var sb strings.Builder
	for _, r := range results {
		for _, c := range r.cpu {
			if c.wall <= 0 {
				continue
			}
			if sb.Len() == 0 {
				sb.WriteString("Where the CPU went in each phase: the machine's busy share of its " +
					"CPUs, and the cores each process used (CPU seconds / the phase's seconds):\n\n" +
					"| rate | phase | seconds | machine busy | " + strings.Join(cpuColumns, " | ") +
					" | other |\n|---:|---|---:|---:|" + strings.Repeat("---:|", len(cpuColumns)+1) + "\n")
			}
			secs := c.wall.Seconds()
			fmt.Fprintf(&sb, "| %g/s | %s | %.0f | %.0f %% |", r.rate, c.phase, secs, 100*c.share)
			writeProcessCells(&sb, c.processes, secs, "%.2f")
			sb.WriteString("\n")
		}
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

func (l latencies) String() string {
	return fmt.Sprintf("%s / %s / %s", dur(l.p50), dur(l.p90), dur(l.p99))
}

// busyMark marks a figure measured on a machine still busy when it started
// (bench.settle's reason), which compares with nothing.
func busyMark(busy string) string {
	if busy != "" {
		return " (" + busy + ")"
	}
	return ""
}

func backlogMark(b bool) string {
	if b {
		return " (backlog)"
	}
	return ""
}

// rateName spells rate for a namespace name, which allows no dot: 12.5/s
// is "12-5".
func rateName(rate float64) string {
	return strings.ReplaceAll(strconv.FormatFloat(rate, 'g', -1, 64), ".", "-")
}
