package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// appFloorVariant is the Application floor's name in the table.
const appFloorVariant = "Application floor (plain client)"

// runAppFloor measures what the Application API itself costs the cluster,
// with no controller: a plain client creates each Application (no webhook:
// the operator is not running to answer them), then its Deployment and
// Service with a controller reference to it, and, when the Deployment is
// available, writes the Application's status once (Ready, the Deployment's
// status mirrored). These are the 4 writes any controller of this API has
// to make, without its reads, watches or server-side applies. The
// operator's ratio to it is what the operator adds over the API's own cost.
func (b *bench) runAppFloor(ctx context.Context, n int) (result, error) {
	ns := b.spread("bench-appfloor", n)
	if err := b.installWithoutWebhooks(ctx); err != nil {
		return result{}, err
	}
	if err := createNamespaces(ctx, b.c, ns); err != nil {
		return result{}, err
	}
	logf("Application floor N=%d: a plain client creates %d Applications, their children and their status", n, n)
	t := newTracker(n)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := watchReady(wctx, b.c, ns, &sunappsv1.ApplicationList{}, applicationReady(true), t); err != nil {
		return result{}, err
	}
	f, stopFloor, err := startAppFloor(wctx, b.c, ns, n)
	if err != nil {
		return result{}, err
	}
	defer stopFloor()
	stages := newStageRecorder()
	if err := stages.watch(wctx, b.c, ns, true); err != nil {
		return result{}, err
	}

	busy := b.settle(ctx, "Application floor", n)
	span, err := startCPUSpan(ctx, b.apiserver, b.cfg.apiserverProfile)
	if err != nil {
		return result{}, err
	}
	if err := createAll(ctx, n, t, func(ctx context.Context, i int) error {
		return f.create(ctx, ns.of(i), itemName(i))
	}); err != nil {
		return result{}, err
	}
	if err := waitConverged(f.ctx, t, b.cfg.timeout, "Application floor"); err != nil {
		return result{}, f.failure(ctx, err)
	}
	r := na()
	r.busy = busy
	if err := span.end(ctx, &r); err != nil {
		return result{}, err
	}
	r.variant, r.n = appFloorVariant, n
	t.timings(&r)
	b.stages = append(b.stages, stages.summarize(t, "Application floor", n, stageReady))
	r.writesMean, r.writesMedian = 4, 4
	logf("Application floor N=%d converged in %s; deleting the namespace", n, r.converge.Round(time.Millisecond))
	return r, cleanUp(deleteNamespaces(ctx, b.c, ns))
}

// appFloor is the Application floor's plain client: create makes an
// Application and its children, change changes an Application's image and
// its Deployment's, and a watch of the Deployments in its namespaces writes
// each Application's status once per generation: when its Deployment is
// available (generation 1), and when its changed Deployment is rolled out
// (generation 2; patchAppFloorStatus). The burst (runAppFloor) and the
// steady rate (steadyAppFloor) share it.
type appFloor struct {
	c client.Client
	// ctx ends with the first status write that fails (its cause), or
	// when the floor is stopped.
	ctx        context.Context
	clusterIPs sync.Map // "namespace/name" of an Application → its Service's clusterIP
}

// floorDone is a Deployment of the Application floor that reached what its
// Application's generation asks: available (1), or rolled out with the
// changed image (2).
type floorDone struct {
	d          *appsv1.Deployment
	generation int64
}

// startAppFloor starts the Application floor's status writers for up to n
// Applications in ns, each created and changed at most once; stop ends them.
func startAppFloor(ctx context.Context, c client.WithWatch, ns spread, n int) (f *appFloor, stop func(), err error) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan floorDone, 2*n)
	var seen sync.Map
	onDeployment := func(o client.Object) bool {
		d := o.(*appsv1.Deployment)
		var generation int64
		switch {
		case deploymentRolledOut(d):
			generation = 2
		case deploymentAvailable(d) && !deploymentUpdated(d):
			generation = 1
		default:
			return false
		}
		if _, dup := seen.LoadOrStore(fmt.Sprintf("%s/%s/%d", d.Namespace, d.Name, generation), true); !dup {
			done <- floorDone{d: d.DeepCopy(), generation: generation}
		}
		return false
	}
	if err := watchReady(wctx, c, ns, &appsv1.DeploymentList{}, onDeployment, newTracker(n)); err != nil {
		cancel()
		return nil, nil, err
	}
	pctx, fail := context.WithCancelCause(wctx)
	f = &appFloor{c: c, ctx: pctx}
	var patchers sync.WaitGroup
	for range createWorkers {
		patchers.Go(func() {
			for {
				select {
				case <-pctx.Done():
					return
				case fd := <-done:
					ip, _ := f.clusterIPs.Load(fd.d.Namespace + "/" + fd.d.Name)
					if err := patchAppFloorStatus(pctx, c, fd.d, ip.(string), fd.generation); err != nil {
						fail(fmt.Errorf("writing the status of %s: %w", fd.d.Name, err))
					}
				}
			}
		})
	}
	return f, func() { fail(nil); patchers.Wait(); cancel() }, nil
}

// create makes the Application name in ns, then its Service and Deployment
// with a controller reference to it.
func (f *appFloor) create(ctx context.Context, ns, name string) error {
	app := newApplication(ns, name)
	if err := f.c.Create(ctx, app); err != nil {
		return err
	}
	owner := metav1.NewControllerRef(app, sunappsv1.GroupVersion.WithKind("Application"))
	// The Service first: its clusterIP is known before the Deployment can
	// become available.
	for _, obj := range slices.Backward(floorObjects(ns, name)) {
		obj.SetOwnerReferences([]metav1.OwnerReference{*owner})
		if err := f.c.Create(ctx, obj); err != nil {
			return err
		}
		if svc, ok := obj.(*corev1.Service); ok {
			f.clusterIPs.Store(ns+"/"+name, svc.Spec.ClusterIP)
		}
	}
	return nil
}

// change makes the steady rate's spec change of the Application name in ns
// (the same patch as the operator's Applications get), then the change it
// asks of its Deployment: the Application API's own writes for a new image,
// with no reconcile, no apply and no event.
func (f *appFloor) change(ctx context.Context, ns, name string) error {
	if err := f.c.Patch(ctx, &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.RawPatch(types.MergePatchType, applicationImagePatch(name))); err != nil {
		return err
	}
	return f.c.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.RawPatch(types.StrategicMergePatchType, deploymentImagePatch()))
}

// failure is err, or the failed status write that ended f.ctx, unless the
// caller's ctx ended first.
func (f *appFloor) failure(ctx context.Context, err error) error {
	if cause := context.Cause(f.ctx); cause != nil && ctx.Err() == nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// patchAppFloorStatus writes the status the operator would write for the
// Application of d, at generation, once d is available (or rolled out):
// its status mirrored, the Service's clusterIP, and the four conditions.
func patchAppFloorStatus(ctx context.Context, c client.Client, d *appsv1.Deployment, clusterIP string,
	generation int64) error {
	now := metav1.Now()
	mirror := func(typ string, from appsv1.DeploymentConditionType) metav1.Condition {
		for _, dc := range d.Status.Conditions {
			if dc.Type == from {
				return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(dc.Status), Reason: dc.Reason,
					Message: dc.Message, ObservedGeneration: generation, LastTransitionTime: now}
			}
		}
		return metav1.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: "Unknown",
			ObservedGeneration: generation, LastTransitionTime: now}
	}
	status := sunappsv1.ApplicationStatus{
		Workflow:           sunappsv1.NewWorkflowStatus(&d.Status),
		ClusterIP:          clusterIP,
		Selector:           metav1.FormatLabelSelector(d.Spec.Selector),
		ObservedGeneration: generation,
		Conditions: []metav1.Condition{
			mirror(sunappsv1.ConditionAvailable, appsv1.DeploymentAvailable),
			mirror(sunappsv1.ConditionProgressing, appsv1.DeploymentProgressing),
			{Type: sunappsv1.ConditionReady, Status: metav1.ConditionTrue, Reason: sunappsv1.ReasonReady,
				Message: "1 of 1 Pods available", ObservedGeneration: generation, LastTransitionTime: now},
		},
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name}}
	return c.Status().Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
}
