// Package seedcontroller is the benchmark's reference for the seed's design
// (seed 000, "Kubernetes Operator 进阶开发"): the Application reconcile of the
// book, rewritten on this repository's Application type so it can run
// against the same cluster. It keeps every design choice that costs time or
// writes:
//
//   - every reconcile first waits for a fresh 100 ms ticker;
//   - a global reconcile counter is bumped and logged;
//   - children are create-only (never updated, never compared);
//   - the status is written with Update (whole object) whenever
//     reflect.DeepEqual says the mirrored child status differs, once per
//     child, returning after each write;
//   - Application updates (status included) trigger reconciles, as do child
//     updates and deletions;
//   - one worker, the controller-runtime default; the whole cache
//     (managedFields included), the kubebuilder default.
//
// It is not used by the operator.
package seedcontroller

import (
	"context"
	"reflect"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// Counter counts reconciles, as the seed's CounterReconcileApplication.
var Counter atomic.Int64

// GenericRequeueDuration is the seed's requeue delay after a failure.
const GenericRequeueDuration = time.Minute

// Reconciler is the seed's ApplicationReconciler.
type Reconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// Reconcile is the seed's reconcile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ticker := time.NewTicker(100 * time.Millisecond)
	<-ticker.C
	ticker.Stop()
	logger := log.FromContext(ctx)
	logger.V(1).Info("Reconciling Application", "CounterReconcileApplication", Counter.Add(1))

	app := &sunappsv1.Application{}
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		if errors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
	}
	if result, err := r.reconcileDeployment(ctx, app); err != nil {
		return result, err
	}
	if result, err := r.reconcileService(ctx, app); err != nil {
		return result, err
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) reconcileDeployment(ctx context.Context, app *sunappsv1.Application) (ctrl.Result, error) {
	dp := &appsv1.Deployment{}
	err := r.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, dp)
	if err == nil {
		// The seed compares appsv1.DeploymentStatus values; this
		// repository's status holds the same fields in WorkflowStatus.
		if reflect.DeepEqual(sunappsv1.NewWorkflowStatus(&dp.Status), app.Status.Workflow) {
			return ctrl.Result{}, nil
		}
		app.Status.Workflow = sunappsv1.NewWorkflowStatus(&dp.Status)
		if err := r.Status().Update(ctx, app); err != nil {
			return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
		}
		return ctrl.Result{}, nil
	}
	if !errors.IsNotFound(err) {
		return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
	}
	newDp := &appsv1.Deployment{}
	newDp.SetName(app.Name)
	newDp.SetNamespace(app.Namespace)
	newDp.SetLabels(app.Labels)
	d := app.Spec.Deployment
	newDp.Spec = appsv1.DeploymentSpec{
		Replicas: d.Replicas, Selector: d.Selector, Template: d.Template, Strategy: d.Strategy,
		MinReadySeconds: d.MinReadySeconds, RevisionHistoryLimit: d.RevisionHistoryLimit,
		Paused: d.Paused, ProgressDeadlineSeconds: d.ProgressDeadlineSeconds,
	}
	newDp.Spec.Template.SetLabels(app.Labels)
	if err := ctrl.SetControllerReference(app, newDp, r.Scheme); err != nil {
		return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
	}
	if err := r.Create(ctx, newDp); err != nil {
		return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) reconcileService(ctx context.Context, app *sunappsv1.Application) (ctrl.Result, error) {
	svc := &corev1.Service{}
	err := r.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, svc)
	if err == nil {
		if reflect.DeepEqual(svc.Status, app.Status.Network) {
			return ctrl.Result{}, nil
		}
		app.Status.Network = svc.Status
		if err := r.Status().Update(ctx, app); err != nil {
			return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
		}
		return ctrl.Result{}, nil
	}
	if !errors.IsNotFound(err) {
		return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
	}
	newSvc := &corev1.Service{}
	newSvc.SetName(app.Name)
	newSvc.SetNamespace(app.Namespace)
	newSvc.SetLabels(app.Labels)
	newSvc.Spec = app.Spec.Service.ServiceSpec
	newSvc.Spec.Selector = app.Labels
	if err := ctrl.SetControllerReference(app, newSvc, r.Scheme); err != nil {
		return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
	}
	if err := r.Create(ctx, newSvc); err != nil {
		return ctrl.Result{RequeueAfter: GenericRequeueDuration}, err
	}
	return ctrl.Result{}, nil
}

// childPredicate is the seed's predicate on Deployments and Services.
var childPredicate = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	DeleteFunc: func(event.DeleteEvent) bool { return true },
	UpdateFunc: func(event.UpdateEvent) bool { return true },
}

// SetupWithManager registers the controller with the seed's predicates.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&sunappsv1.Application{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return true },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return true },
		})).
		Owns(&appsv1.Deployment{}, builder.WithPredicates(childPredicate)).
		Owns(&corev1.Service{}, builder.WithPredicates(childPredicate)).
		Named("seed-application").
		Complete(r)
}
