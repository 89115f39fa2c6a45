package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// createWorkers is how many objects the benchmark creates in parallel, for
// every variant alike.
const createWorkers = 8

func itemName(i int) string { return fmt.Sprintf("bench-%05d", i) }

func benchLabels(name string) map[string]string { return map[string]string{"app": name} }

func podTemplate(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: benchLabels(name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "nginx", Image: "nginx:1.14.2",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}},
		}}},
	}
}

func servicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80)}}
}

// newApplication is the benchmark's Application: one replica of nginx and a
// ClusterIP Service, labelled so that the seed design (which copies the
// Application's labels onto the Pod template and the Service selector)
// builds the same objects.
func newApplication(ns, name string) *sunappsv1.Application {
	one := int32(1)
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: benchLabels(name)},
		Spec: sunappsv1.ApplicationSpec{
			Deployment: sunappsv1.DeploymentTemplate{
				Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: benchLabels(name)},
				Template: podTemplate(name),
			},
			Service: sunappsv1.ServiceTemplate{ServiceSpec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Ports: servicePorts(),
			}},
		},
	}
}

// floorObjects are what a plain client creates for the floor: the same
// Deployment and Service, without any controller.
func floorObjects(ns, name string) []client.Object {
	one := int32(1)
	return []client.Object{
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: benchLabels(name)},
			Spec: appsv1.DeploymentSpec{
				Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: benchLabels(name)},
				Template: podTemplate(name),
			},
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: benchLabels(name)},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Ports: servicePorts(), Selector: benchLabels(name),
			},
		},
	}
}

// tracker records, per item, when its creation started, when the watch first
// showed it ready, and how many times the watched object was modified.
type tracker struct {
	mu        sync.Mutex
	created   map[string]time.Time
	ready     map[string]time.Time
	modified  map[string]int
	allReady  chan struct{}
	n         int
	closeOnce sync.Once
}

func newTracker(n int) *tracker {
	return &tracker{created: map[string]time.Time{}, ready: map[string]time.Time{},
		modified: map[string]int{}, allReady: make(chan struct{}), n: n}
}

func (t *tracker) markCreated(name string, at time.Time) {
	t.mu.Lock()
	t.created[name] = at
	t.mu.Unlock()
}

func (t *tracker) observe(name string, typ watch.EventType, ready bool, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if typ == watch.Modified {
		t.modified[name]++
	}
	if _, done := t.ready[name]; !done && ready {
		t.ready[name] = at
		if len(t.ready) == t.n {
			t.closeOnce.Do(func() { close(t.allReady) })
		}
	}
}

func (t *tracker) readyCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ready)
}

// timings records in r the convergence time and the p50 and p99 of the
// create→ready latencies.
func (t *tracker) timings(r *result) {
	r.converge = t.span()
	lat := t.latencies()
	r.p50, r.p99 = percentile(lat, 0.5), percentile(lat, 0.99)
}

// latencies returns the create->ready latencies, sorted.
func (t *tracker) latencies() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Duration, 0, len(t.ready))
	for name, r := range t.ready {
		if c, ok := t.created[name]; ok {
			out = append(out, r.Sub(c))
		}
	}
	slices.Sort(out)
	return out
}

func (t *tracker) span() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first, last time.Time
	for _, c := range t.created {
		if first.IsZero() || c.Before(first) {
			first = c
		}
	}
	for _, r := range t.ready {
		if r.After(last) {
			last = r
		}
	}
	return last.Sub(first)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// watchReady follows list (an ApplicationList or DeploymentList) in ns and
// reports every item to t until ctx ends.
func watchReady(ctx context.Context, c client.WithWatch, ns spread, list client.ObjectList,
	isReady func(client.Object) bool, t *tracker) error {
	return watchEach(ctx, c, ns, list, func(typ watch.EventType, obj client.Object, at time.Time) {
		t.observe(obj.GetName(), typ, isReady(obj), at)
	})
}

// watchEach follows list in the namespaces of ns and calls seen with every
// added or modified object, and when the watch delivered it, until ctx
// ends. It re-watches from the last resourceVersion when the server closes
// the watch.
func watchEach(ctx context.Context, c client.WithWatch, ns spread, list client.ObjectList,
	seen func(watch.EventType, client.Object, time.Time)) error {
	if err := c.List(ctx, list, client.InNamespace(ns.watched())); err != nil {
		return err
	}
	rv := list.(metav1.ListInterface).GetResourceVersion()
	open := func() (watch.Interface, error) {
		return c.Watch(ctx, list, client.InNamespace(ns.watched()), &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: rv, AllowWatchBookmarks: true}})
	}
	w, err := open()
	if err != nil {
		return err
	}
	go func() {
		for {
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(client.Object)
				if !ok || !ns.holds(obj.GetNamespace()) {
					continue
				}
				rv = obj.GetResourceVersion()
				switch ev.Type {
				case watch.Added, watch.Modified:
					seen(ev.Type, obj, time.Now())
				}
			}
			if ctx.Err() != nil {
				return
			}
			for {
				if w, err = open(); err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	go func() { <-ctx.Done(); w.Stop() }()
	return nil
}

func applicationReady(requireCondition bool) func(client.Object) bool {
	return func(o client.Object) bool {
		app := o.(*sunappsv1.Application)
		if app.Status.Workflow.AvailableReplicas != 1 {
			return false
		}
		return !requireCondition || meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)
	}
}

func deploymentAvailable(o client.Object) bool {
	d := o.(*appsv1.Deployment)
	return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas == 1
}

// createAll creates n items with createWorkers workers; create makes item i.
func createAll(ctx context.Context, n int, t *tracker, create func(ctx context.Context, i int) error) error {
	idx := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range createWorkers {
		wg.Go(func() {
			for i := range idx {
				t.markCreated(itemName(i), time.Now())
				if err := create(ctx, i); err != nil {
					errs <- fmt.Errorf("creating %s: %w", itemName(i), err)
				}
			}
		})
	}
	for i := range n {
		idx <- i
	}
	close(idx)
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	return nil
}

// waitConverged waits for every item to be ready, printing progress.
func waitConverged(ctx context.Context, t *tracker, timeout time.Duration, label string) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-t.allReady:
			return nil
		case <-tick.C:
			logf("  %s: %d/%d ready", label, t.readyCount(), t.n)
		case <-deadline:
			return fmt.Errorf("%s: only %d of %d converged within %s", label, t.readyCount(), t.n, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// eventsByObject counts, per regarding object name, the Event writes of
// controller in the namespaces of ns (a series of k occurrences costs k
// writes).
func eventsByObject(ctx context.Context, c client.Client, ns spread, controller string) (map[string]int, int, error) {
	list := &eventsv1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(ns.watched())); err != nil {
		return nil, 0, err
	}
	out := map[string]int{}
	total := 0
	for _, e := range list.Items {
		if e.ReportingController != controller || !ns.holds(e.Namespace) {
			continue
		}
		k := 1
		if e.Series != nil && e.Series.Count > 1 {
			k = int(e.Series.Count)
		}
		out[e.Regarding.Name] += k
		total += k
	}
	return out, total, nil
}

// createNamespace makes a fresh namespace, replacing an older one.
func createNamespace(ctx context.Context, c client.Client, name string) error {
	return createNamespaces(ctx, c, single(name))
}

// deleteNamespace deletes a namespace and waits until it is gone, so the
// next measurement starts on an idle cluster.
func deleteNamespace(ctx context.Context, c client.Client, name string) error {
	return deleteNamespaces(ctx, c, single(name))
}

// createNamespaces makes the namespaces of ns fresh, replacing older ones.
func createNamespaces(ctx context.Context, c client.Client, ns spread) error {
	if err := deleteNamespaces(ctx, c, ns); err != nil {
		return err
	}
	for _, name := range ns.names() {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return err
		}
	}
	return nil
}

// deleteNamespaces deletes the namespaces of ns and waits until they are
// gone, so the next measurement starts on an idle cluster.
func deleteNamespaces(ctx context.Context, c client.Client, ns spread) error {
	for _, name := range ns.names() {
		err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	limit := deletionLimit(ns.n)
	deadline := time.Now().Add(limit)
	for _, name := range ns.names() {
		for {
			err := c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
			if apierrors.IsNotFound(err) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for namespace %s to go: %w", name, ctx.Err())
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("namespace %s still exists after %s", name, limit)
			}
			time.Sleep(time.Second)
		}
	}
	return nil
}

// cleanUpError is a variant's clean-up that failed after its measurement:
// the run stops, but what was measured is kept.
type cleanUpError struct{ err error }

func (e *cleanUpError) Error() string { return "cleaning up: " + e.err.Error() }
func (e *cleanUpError) Unwrap() error { return e.err }

// cleanUp marks err, if any, as a clean-up's.
func cleanUp(err error) error {
	if err == nil {
		return nil
	}
	return &cleanUpError{err}
}

// deletionLimit is how long the namespaces of n items may take to go: 10
// minutes, or 120 ms per item (5,000 Applications took 7 minutes here).
func deletionLimit(n int) time.Duration {
	return max(10*time.Minute, time.Duration(n)*120*time.Millisecond)
}

// spread is where a variant puts its n items: all in the namespace prefix,
// or, with per > 0 (-per-namespace), per items in each of the namespaces
// prefix-000, prefix-001, ... Kubernetes' own controllers list a
// namespace's objects at every sync (the deployment controller its
// ReplicaSets, the ReplicaSet controller its Pods), so a single namespace
// of 10,000 Applications costs kube-controller-manager quadratically.
type spread struct {
	prefix string
	n, per int
}

// single is the one namespace name.
func single(name string) spread { return spread{prefix: name} }

// of is the namespace of item i.
func (s spread) of(i int) string {
	if s.per <= 0 {
		return s.prefix
	}
	return fmt.Sprintf("%s-%03d", s.prefix, i/s.per)
}

// names is every namespace of s.
func (s spread) names() []string {
	if s.per <= 0 {
		return []string{s.prefix}
	}
	names := make([]string, 0, (s.n+s.per-1)/s.per)
	for i := 0; i < s.n; i += s.per {
		names = append(names, s.of(i))
	}
	return names
}

// watched is the namespace lists and watches cover: the only one, or all
// ("") when there are several (holds filters them).
func (s spread) watched() string {
	if s.per <= 0 {
		return s.prefix
	}
	return ""
}

// holds tells whether the namespace ns is one of s.
func (s spread) holds(ns string) bool {
	if s.per <= 0 {
		return ns == s.prefix
	}
	rest, found := strings.CutPrefix(ns, s.prefix+"-")
	i, err := strconv.Atoi(rest)
	return found && err == nil && i*s.per < s.n && s.of(i*s.per) == ns
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
