package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
// change takes to reach the Deployment and Ready.

// updatedImage is what the steady-rate mode's spec change sets.
const updatedImage = "nginx:1.15.0"

// steadyResult is one rate's figures.
type steadyResult struct {
	rate                 float64
	items                int
	operator, floor      latencies
	opBacklog, flBacklog bool
	// update is Application update → Ready with the new generation,
	// updateDeployment the same update → the Deployment changed, and
	// floorUpdate a Deployment update → rolled out and available.
	update, updateDeployment, floorUpdate latencies
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
	defer p.stop()

	if cfg.base > 0 {
		logf("steady: %d base Applications", cfg.base)
		t := newTracker(cfg.base)
		wctx, stop := context.WithCancel(ctx)
		if err := watchReady(wctx, b.c, baseNS, &sunappsv1.ApplicationList{}, applicationReady(true), t); err != nil {
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

	var results []steadyResult
	for _, rate := range cfg.rates {
		r, err := b.steadyRate(ctx, rate, int(math.Ceil(rate*window.Seconds())))
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	if w, err := p.writes(); err == nil {
		logf("steady: the operator made %d writes in all", w)
	}
	return results, nil
}

// steadyRate measures one rate: n creates of each variant, then n updates.
func (b *bench) steadyRate(ctx context.Context, rate float64, n int) (steadyResult, error) {
	res := steadyResult{rate: rate, items: n}
	opNS, flNS := fmt.Sprintf("bench-steady-op-%g", rate), fmt.Sprintf("bench-steady-floor-%g", rate)
	for _, ns := range []string{opNS, flNS} {
		if err := createNamespace(ctx, b.c, ns); err != nil {
			return res, err
		}
	}
	b.settle(ctx, fmt.Sprintf("steady %g/s", rate), n)

	// Applications at the rate.
	logf("steady %g/s: %d Applications, open-loop", rate, n)
	t, stopWatch, err := b.trackAt(ctx, opNS, &sunappsv1.ApplicationList{}, applicationReady(true), n)
	if err != nil {
		return res, err
	}
	err = openLoop(ctx, rate, n, func(ctx context.Context, i int) error {
		t.markCreated(itemName(i), time.Now())
		return b.c.Create(ctx, newApplication(opNS, itemName(i)))
	})
	if err == nil {
		err = waitConverged(ctx, t, b.cfg.timeout, fmt.Sprintf("operator at %g/s", rate))
	}
	stopWatch()
	if err != nil {
		return res, err
	}
	res.operator = summarizeLatencies(t.latencies())
	res.opBacklog = backlogged(t.createdInOrder(n))

	// The floor's Deployments and Services at the same rate.
	logf("steady %g/s: %d floor Deployments and Services, open-loop", rate, n)
	t, stopWatch, err = b.trackAt(ctx, flNS, &appsv1.DeploymentList{}, deploymentAvailable, n)
	if err != nil {
		return res, err
	}
	err = openLoop(ctx, rate, n, func(ctx context.Context, i int) error {
		t.markCreated(itemName(i), time.Now())
		for _, obj := range floorObjects(flNS, itemName(i)) {
			if err := b.c.Create(ctx, obj); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = waitConverged(ctx, t, b.cfg.timeout, fmt.Sprintf("floor at %g/s", rate))
	}
	stopWatch()
	if err != nil {
		return res, err
	}
	res.floor = summarizeLatencies(t.latencies())
	res.flBacklog = backlogged(t.createdInOrder(n))

	// A spec change of every Application, at the same rate: its new image
	// reaches the Deployment, which rolls out, and the Application is Ready
	// with the new generation.
	logf("steady %g/s: %d Application spec changes, open-loop", rate, n)
	t, stopWatch, err = b.trackAt(ctx, opNS, &sunappsv1.ApplicationList{}, func(o client.Object) bool {
		app := o.(*sunappsv1.Application)
		return app.Generation > 1 && app.Status.ObservedGeneration >= app.Generation &&
			meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)
	}, n)
	if err != nil {
		return res, err
	}
	changed := newTracker(n)
	wctx, stopDeployments := context.WithCancel(ctx)
	if err := watchReady(wctx, b.c, opNS, &appsv1.DeploymentList{}, deploymentUpdated, changed); err != nil {
		stopDeployments()
		stopWatch()
		return res, err
	}
	err = openLoop(ctx, rate, n, func(ctx context.Context, i int) error {
		now := time.Now()
		t.markCreated(itemName(i), now)
		changed.markCreated(itemName(i), now)
		return b.c.Patch(ctx, &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: itemName(i)}},
			client.RawPatch(types.MergePatchType, applicationImagePatch(itemName(i))))
	})
	if err == nil {
		err = waitConverged(ctx, t, b.cfg.timeout, fmt.Sprintf("operator spec changes at %g/s", rate))
	}
	stopWatch()
	stopDeployments()
	if err != nil {
		return res, err
	}
	res.update = summarizeLatencies(t.latencies())
	res.updateDeployment = summarizeLatencies(changed.latencies())

	// The floor's Deployments changed the same way.
	logf("steady %g/s: %d floor Deployment spec changes, open-loop", rate, n)
	t, stopWatch, err = b.trackAt(ctx, flNS, &appsv1.DeploymentList{}, deploymentRolledOut, n)
	if err != nil {
		return res, err
	}
	err = openLoop(ctx, rate, n, func(ctx context.Context, i int) error {
		t.markCreated(itemName(i), time.Now())
		return b.c.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: flNS, Name: itemName(i)}},
			client.RawPatch(types.StrategicMergePatchType, []byte(
				`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"`+updatedImage+`"}]}}}}`)))
	})
	if err == nil {
		err = waitConverged(ctx, t, b.cfg.timeout, fmt.Sprintf("floor spec changes at %g/s", rate))
	}
	stopWatch()
	if err != nil {
		return res, err
	}
	res.floorUpdate = summarizeLatencies(t.latencies())
	logf("steady %g/s: create→Ready p99 operator %s, floor %s; spec change→Ready p99 operator %s, floor %s",
		rate, dur(res.operator.p99), dur(res.floor.p99), dur(res.update.p99), dur(res.floorUpdate.p99))

	for _, ns := range []string{opNS, flNS} {
		if err := deleteNamespace(ctx, b.c, ns); err != nil {
			return res, err
		}
	}
	return res, nil
}

// trackAt starts a tracker of n items over list in ns; stop ends its watch.
func (b *bench) trackAt(ctx context.Context, ns string, list client.ObjectList, ready func(client.Object) bool,
	n int) (*tracker, context.CancelFunc, error) {
	t := newTracker(n)
	wctx, stop := context.WithCancel(ctx)
	if err := watchReady(wctx, b.c, ns, list, ready, t); err != nil {
		stop()
		return nil, nil, err
	}
	return t, stop, nil
}

// applicationImagePatch is the merge patch that changes an Application's
// image (a merge patch replaces the containers list whole).
func applicationImagePatch(name string) []byte {
	containers := podTemplate(name).Spec.Containers
	containers[0].Image = updatedImage
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"spec":{"deployment":{"template":{"spec":{"containers":[`+
		`{"name":%q,"image":%q,"ports":[{"containerPort":%d}]}]}}}}}`,
		containers[0].Name, containers[0].Image, containers[0].Ports[0].ContainerPort)
	return []byte(sb.String())
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

// ensurePodCapacity adds kwok nodes until the cluster's nodes can hold pods
// Pods (hack/dev-cluster.sh makes 3 nodes of 1,000). kwok keeps every node
// annotated kwok.x-k8s.io/node=fake Ready.
func ensurePodCapacity(ctx context.Context, c client.Client, pods int) error {
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return err
	}
	capacity := 0
	for _, n := range nodes.Items {
		capacity += int(n.Status.Allocatable.Pods().Value())
	}
	const perNode = 1000
	for i := 0; capacity < pods; i++ {
		name := fmt.Sprintf("kwok-bench-node-%d", i)
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err == nil {
			continue // counted above
		}
		node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"},
		}}
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("adding node %s: %w", name, err)
		}
		// A merge patch without resourceVersion: kwok writes the new node's
		// status at the same time (conditions), which an Update would race.
		patch := fmt.Appendf(nil, `{"status":{"capacity":{"cpu":"32","memory":"256Gi","pods":"%d"},`+
			`"allocatable":{"cpu":"32","memory":"256Gi","pods":"%d"}}}`, perNode, perNode)
		if err := c.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("setting the capacity of node %s: %w", name, err)
		}
		capacity += perNode
		logf("bench: added node %s (%d Pods); the nodes now hold %d", name, perNode, capacity)
	}
	return nil
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
	sb.WriteString("| rate | items | operator p50 / p90 / p99 | floor p50 / p90 / p99 " +
		"| operator p99 ≤ floor p99 + 1 s |\n" +
		"|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		target := "met"
		switch {
		case r.flBacklog:
			target = "floor backlogged: not applicable"
		case r.operator.p99 > r.floor.p99+time.Second:
			target = fmt.Sprintf("**missed** by %s", dur(r.operator.p99-r.floor.p99-time.Second))
		}
		fmt.Fprintf(&sb, "| %g/s | %d | %s%s | %s%s | %s |\n", r.rate, r.items, r.operator.String(),
			backlogMark(r.opBacklog), r.floor.String(), backlogMark(r.flBacklog), target)
	}
	sb.WriteString("\nSpec changes at the same rate (a new image): p50 / p90 / p99.\n\n" +
		"| rate | Application update → Deployment updated | → Application Ready with the new generation " +
		"| floor: Deployment update → rolled out |\n|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&sb, "| %g/s | %s | %s | %s |\n", r.rate, r.updateDeployment.String(), r.update.String(),
			r.floorUpdate.String())
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

func (l latencies) String() string {
	return fmt.Sprintf("%s / %s / %s", dur(l.p50), dur(l.p90), dur(l.p99))
}

func backlogMark(b bool) string {
	if b {
		return " (backlog)"
	}
	return ""
}
