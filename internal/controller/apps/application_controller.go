package apps

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	policyv1 "k8s.io/api/policy/v1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/settings"
)

// ApplicationReconciler keeps each Application's Deployment and Service equal
// to its spec and mirrors their status back.
type ApplicationReconciler struct {
	client.Client
	// APIReader reads around the cache the object of a child's name that
	// refused its create: the cache never holds a foreign one
	// (apply.Applier.Observe).
	APIReader client.Reader
	Recorder  events.EventRecorder
	// ConflictRecheck is how often an Application blocked by a foreign
	// child looks again; settings.DefaultConflictRecheckInterval when zero.
	ConflictRecheck time.Duration
	// StatusBatch is how long a status write that changes no condition may
	// be put off; StatusBatch (the package's) when zero. The envtest suite
	// shortens it: its tests wait for such writes, users do not.
	StatusBatch time.Duration
	// Settings, when set, are the live operator settings
	// (OperatorConfiguration): their conflict recheck interval replaces
	// ConflictRecheck.
	Settings *settings.Holder
	// written holds the status writes the cache does not hold yet.
	written controllers.WrittenObjects
	// children is what the controller remembers of its children: those
	// created that the cache does not hold yet, those found in sync.
	children apply.Memory
	// routes is the HTTPRoute watch, started by the first route made: a
	// cluster without the Gateway API has none to watch
	// (machinery.LazyWatch).
	routes *machinery.LazyWatch
}

// +kubebuilder:rbac:groups=apps.sunstrider.cn,resources=applications,verbs=list;watch
// +kubebuilder:rbac:groups=apps.sunstrider.cn,resources=applications/status,verbs=patch
// +kubebuilder:rbac:groups=apps.sunstrider.cn,resources=applications/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch

// applicationScope carries one reconcile's Application and what it
// observed. The observation holds the reconcile's Children (s.children):
// computeStatus reads a conflict or a refusal from it.
type applicationScope struct {
	app *sunappsv1.Application
	observation
}

// Reconcile brings an Application's children in line with its spec and
// writes its status once, from what it observed, through the driver every
// kind follows (internal/controller/doc.go).
func (r *ApplicationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return controllers.Reconcile(ctx, req, r.kind())
}

// applicationKind is the Application's kind, for messages.
const applicationKind = "Application"

// kind is the Application as the driver runs it. On purpose, unlike the
// other kinds:
//   - SelectorImmutable: a spec.deployment.selector that differs from the
//     existing Deployment's blocks the Deployment's write (Ready=False,
//     Stalled); the Service is still written, with the existing selector.
//   - Right after creating the Deployment, no status is written: the new
//     Deployment's own watch event follows, whose reconcile writes the
//     status from it; a write now would be one more per Application, soon
//     replaced.
//   - StatusBatch: a status write that changes no condition is put off.
func (r *ApplicationReconciler) kind() *controllers.Kind[*sunappsv1.Application, *applicationScope] {
	return &controllers.Kind[*sunappsv1.Application, *applicationScope]{
		Name: applicationKind, Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder,
		Written: &r.written, Memory: &r.children,
		New: func() *sunappsv1.Application { return &sunappsv1.Application{} },
		Begin: func(_ context.Context, app *sunappsv1.Application, children *controllers.Children) *applicationScope {
			return &applicationScope{app: app, observation: observation{children: children, serviceWanted: wantsService(app),
				disruptionBudgetWanted: app.Spec.DisruptionBudget != nil, autoscalerWanted: app.Spec.Autoscaling != nil,
				routeWanted: app.Spec.Route != nil}}
		},
		Phases: []func(context.Context, *applicationScope) error{
			r.checkBounds,
			r.reconcileDeployment,
			r.reconcileRevisions,
			r.reconcileService,
			r.reconcileRoute,
			r.reconcileDisruptionBudget,
			r.reconcileAutoscaler,
			r.observeFailingPod,
			r.observeNodes,
		},
		// A spec beyond its bounds is copied into no child.
		Stop:       func(s *applicationScope) bool { return s.tooLarge != "" },
		SkipStatus: func(s *applicationScope) bool { return slices.Contains(s.children.Created, "Deployment") },
		ComputeStatus: func(app *sunappsv1.Application, s *applicationScope) {
			app.Status = computeStatus(app, &s.observation)
		},
		Batch: cmp.Or(r.StatusBatch, StatusBatch),
		Wrote: wroteStatus,
		Gone: func(_ context.Context, key types.NamespacedName) {
			metrics.ApplicationReady.Forget(key)
		},
		ConflictRecheck: r.conflictRecheck,
		Recheck: func(s *applicationScope) time.Duration {
			if s.routeAPIMissing {
				// No event comes when the Gateway API is installed.
				return r.conflictRecheck()
			}
			return 0
		},
	}
}

// StatusBatch is how long an Application's status write that changes no
// condition (the Deployment's counters during a rollout, a message) may be
// put off, to be made with the next ones. A rollout shorter than that then
// costs two status writes, the new generation seen (Reconciling) and the
// rollout done (Ready), the counters riding on the second; a longer one adds
// a write every StatusBatch, so that a person watching still sees it move
// (docs/conditions.md, docs/performance.md "Steady rate").
const StatusBatch = 10 * time.Second

// wroteStatus counts a written status in the readiness metrics and logs
// what changed.
func wroteStatus(ctx context.Context, orig, app *sunappsv1.Application, _ *applicationScope) {
	metrics.ApplicationReady.Written(app, orig.Status.Conditions, app.Status.Conditions)
	if log := ctrl.LoggerFrom(ctx).V(1); log.Enabled() {
		ready := meta.FindStatusCondition(app.Status.Conditions, sunappsv1.ConditionReady)
		log.Info("Wrote Application status", "ready", ready.Status, "reason", ready.Reason,
			"changed", changedStatusParts(&orig.Status, &app.Status))
	}
}

// sameNameApplication maps a Deployment or Service to the Application of the
// same name and namespace, whether or not that Application exists.
func sameNameApplication(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
}

// notControlledByApplication lets through objects no Application controls:
// Owns already delivers the events of the Application's own children.
var notControlledByApplication = machinery.NotControlledByKind(applicationGroupKind)

// applicationGroupKind is the Application's group and kind.
var applicationGroupKind = sunappsv1.GroupVersion.WithKind("Application").GroupKind()

// ControllerName names the Application controller in its logs and metrics
// (the controller label of controller-runtime's).
const ControllerName = "apps-application"

// SetupWithManager registers the controller: every change of an Application
// or of one of its children (status included) triggers it. Status changes
// count too: the status is the operator's, so a write by anyone else (or a
// stale write refused) is followed by a reconcile that puts it right. The
// operator's own status writes bring none: that reconcile would find
// nothing to do (WrittenObjects.SkipOwnWrites).
func (r *ApplicationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Node{},
		machinery.NodeNotReadyField, machinery.IndexNodeNotReady); err != nil {
		return fmt.Errorf("indexing Nodes by readiness: %w", err)
	}
	c, err := r.watchSettings(ctrl.NewControllerManagedBy(mgr)).
		For(&sunappsv1.Application{}, builder.WithPredicates(r.written.SkipOwnWrites())).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}).
		Owns(&appsv1.ControllerRevision{}).
		// A labelled child stripped of its owner reference (Owns cannot map
		// it) must still wake its Application. Foreign objects are not
		// cached (label-filtered): conflicts are re-checked instead.
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(sameNameApplication),
			builder.WithPredicates(notControlledByApplication)).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(sameNameApplication),
			builder.WithPredicates(notControlledByApplication)).
		Watches(&policyv1.PodDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(sameNameApplication),
			builder.WithPredicates(notControlledByApplication)).
		Watches(&autoscalingv2.HorizontalPodAutoscaler{}, handler.EnqueueRequestsFromMapFunc(sameNameApplication),
			builder.WithPredicates(notControlledByApplication)).
		// A Deployment that just became ready makes its Application Ready:
		// that reconcile goes ahead of the queue.
		Watches(&appsv1.Deployment{}, machinery.EnqueueOwnerWhenReady(applicationGroupKind, deploymentReady)).
		// A node that stops or starts being Ready changes what its Pods'
		// Applications may claim (observeNodes): rare, so all are looked at.
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allApplications),
			builder.WithPredicates(machinery.NodeReadyChanged())).
		WithOptions(machinery.Options()).
		Named(ControllerName).
		Build(r)
	if err != nil {
		return err
	}
	// HTTPRoutes are watched once the first is made: the Gateway API may
	// not be installed (or only later), and a watch of a kind the API
	// server does not serve would stop the manager.
	r.routes = machinery.NewLazyWatch(c, "HTTPRoutes", func() source.Source {
		return source.Kind[client.Object](mgr.GetCache(), &gatewayv1.HTTPRoute{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &sunappsv1.Application{},
				handler.OnlyControllerOwner()))
	})
	return nil
}
