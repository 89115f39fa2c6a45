/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package webapp holds the controller of the webapp.my.domain API group:
// the Guestbook, an active/standby group of guestbook instances.
package webapp

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/settings"
)

// GuestbookReconciler reconciles a Guestbook object: it runs the instances
// in a StatefulSet, keeps exactly one ready instance active behind the
// Service, and reports what it saw in the status.
type GuestbookReconciler struct {
	client.Client
	// APIReader reads from the API server, bypassing the cache: the object
	// of a child's name that refused its create (apply.Applier.Observe),
	// the user's ConfigMap the cache does not hold yet (apply.Get), and the
	// fresh view of the Pods the relabelling acts on.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Image is the guestbook image; DefaultGuestbookImage when empty.
	Image string
	// ConflictRecheck is how often a Guestbook blocked by a foreign child
	// looks again; settings.DefaultConflictRecheckInterval when zero.
	ConflictRecheck time.Duration
	// Settings, when set, are the live operator settings
	// (OperatorConfiguration): their image, resources and conflict recheck
	// interval replace Image and ConflictRecheck, and a change of them
	// reconciles every Guestbook.
	Settings *settings.Holder
	// written holds the status writes the cache does not hold yet.
	written controllers.WrittenObjects
	// children is what the controller remembers of its children: those
	// created that the cache does not hold yet, those found in sync.
	children apply.Memory
	// pods is the Pod watch, started by the first election
	// (machinery.LazyWatch).
	pods *machinery.LazyWatch
}

// Guestbooks are read from the cache only. Setting blockOwnerDeletion on the
// children's owner references needs update on guestbooks/finalizers.
// Children: get is the uncached confirmation before a create; create and
// patch are the server-side apply that creates or updates them. Pods: the
// uncached list before relabelling, and the role label patch; RBAC grants
// that patch on every Pod, and the ValidatingAdmissionPolicy shipped beside
// the role (config/rbac/manager_pod_policy.yaml) refuses all but setting
// LabelRole on a Guestbook's Pod (docs/security.md).
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks,verbs=list;watch
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/status,verbs=patch
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// guestbookScope is what one reconcile of a Guestbook works on.
type guestbookScope struct {
	gb *webappv1.Guestbook
	// settings are the operator settings this reconcile uses.
	settings workloadSettings
	// children records every read and write of the StatefulSet, the
	// Service, the default ConfigMap and the Pods' role labels, and the
	// API server's answers.
	children *controllers.Children
	// observation is what the status is computed from.
	observation observation
	// checksum is the checksum of the configuration the instances run
	// with; configured is false when there is no ConfigMap to run with
	// (its creation was refused), and then the StatefulSet is only
	// observed.
	checksum   string
	configured bool
}

// Reconcile observes a Guestbook and its workload, acts to make the workload
// match the spec, and writes the status computed from what it observed,
// through the driver every kind follows (internal/controller/doc.go).
func (r *GuestbookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return controllers.Reconcile(ctx, req, r.kind())
}

// kind is the Guestbook as the driver runs it. Differs on purpose from
// the other kinds: a missing namespace (NamespaceNotFound, Blocked) stops
// the phases, since nothing can be made in it, and so does a system
// namespace not listed (SystemNamespaceNotListed, Blocked), where nothing
// may be. A refusal does not: the workload already running keeps being
// observed and its election keeps running, the refusal reported beside it.
// A Pod changed between the read and its relabelling is a stale read: the
// Pod's event brings the reconcile that elects on the newer Pod and writes
// the status.
func (r *GuestbookReconciler) kind() *controllers.Kind[*webappv1.Guestbook, *guestbookScope] {
	return &controllers.Kind[*webappv1.Guestbook, *guestbookScope]{
		Name: guestbookKind, Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder,
		Written: &r.written, Memory: &r.children,
		New: func() *webappv1.Guestbook { return &webappv1.Guestbook{} },
		Begin: func(_ context.Context, gb *webappv1.Guestbook, children *controllers.Children) *guestbookScope {
			return &guestbookScope{gb: gb, settings: r.settings(), children: children,
				observation: observation{namespace: namespaceOf(gb), size: gb.Spec.Size, children: children}}
		},
		Phases: []func(context.Context, *guestbookScope) error{
			r.reconcileNamespace,
			r.reconcileConfigMap,
			r.reconcileStatefulSet,
			r.reconcileService,
			r.reconcileRoles,
		},
		Stop: func(s *guestbookScope) bool { return s.observation.namespaceMissing || s.observation.namespaceRefused },
		ComputeStatus: func(gb *webappv1.Guestbook, s *guestbookScope) {
			gb.Status = computeStatus(gb, &s.observation)
		},
		ConflictRecheck: r.conflictRecheck,
	}
}

// guestbookKind is the Guestbook's kind, for messages.
const guestbookKind = "Guestbook"

// reconcileNamespace observes spec.namespace: the workload can only run
// once it exists, and in a system namespace (kube-*) only when the
// OperatorConfiguration lists it. The admission webhook refuses such a
// Guestbook, but one may be stored from before the rule or while the
// webhooks were off: it must not get a workload there (nor its Pods
// relabelled) through the operator's rights.
func (r *GuestbookReconciler) reconcileNamespace(ctx context.Context, s *guestbookScope) error {
	if settings.GuestbookNamespaceRefused(s.observation.namespace, s.settings.systemNamespaces) {
		s.observation.namespaceRefused = true
		ctrl.LoggerFrom(ctx).V(1).Info("Refusing a system namespace the configuration does not list",
			"namespace", s.observation.namespace)
		return nil
	}
	exists, err := machinery.NamespaceExists(ctx, r.Client, s.observation.namespace)
	s.observation.namespaceMissing = err == nil && !exists
	return err
}

// reconcileStatefulSet makes the StatefulSet run the instances as the spec
// asks, and observes it: after a refused write, as it was.
func (r *GuestbookReconciler) reconcileStatefulSet(ctx context.Context, s *guestbookScope) error {
	live := &appsv1.StatefulSet{}
	if !s.configured {
		// Differs on purpose: without its ConfigMap a new template would
		// stop the instances; the StatefulSet running is only observed.
		found, _, err := s.children.Observe(ctx, client.ObjectKey{Namespace: s.observation.namespace, Name: s.gb.Name}, live)
		if found {
			s.observation.statefulSet = live
		}
		return err
	}
	desired, err := desiredStatefulSetWith(s.gb, s.settings, s.checksum)
	if err != nil {
		return err
	}
	obj, err := s.children.Ensure(ctx, desired, live)
	s.observation.statefulSet, _ = obj.(*appsv1.StatefulSet)
	return err
}

// reconcileService makes the Service send traffic to the active instance.
func (r *GuestbookReconciler) reconcileService(ctx context.Context, s *guestbookScope) error {
	desired, err := desiredService(s.gb)
	if err != nil {
		return err
	}
	_, err = s.children.Ensure(ctx, desired, &corev1.Service{})
	return err
}

// reconcileRoles elects the active instance among the Pods of the
// StatefulSet as it runs (also when its write was refused: a failover
// must not wait for a person) and labels them.
func (r *GuestbookReconciler) reconcileRoles(ctx context.Context, s *guestbookScope) error {
	// A Pod changing after this read has its event.
	if err := r.pods.Start(); err != nil {
		return err
	}
	// The cache holds Pods as metadata only; their readiness is read from
	// the API server, which also keeps the election off stale copies.
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(s.observation.namespace),
		client.MatchingLabels{LabelGuestbook: s.gb.Name}); err != nil {
		return fmt.Errorf("listing pods of guestbook %s: %w", s.gb.Name, err)
	}
	elected, err := r.labelRoles(ctx, s, pods.Items)
	if err != nil {
		return err
	}
	s.observation.instances, s.observation.active, s.observation.standby = elected.instances, elected.active, elected.standby
	return nil
}

// conflictRecheck is how often a Guestbook blocked by a foreign child looks
// again: the manager caches only the children it labelled, so the removal
// of the foreign object in the way wakes nobody.
func (r *GuestbookReconciler) conflictRecheck() time.Duration { return r.settings().conflictRecheck }

// ControllerName names the Guestbook controller in its logs and metrics
// (the controller label of controller-runtime's).
const ControllerName = "webapp-guestbook"

// SetupWithManager sets up the controller with the Manager.
func (r *GuestbookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(apply.FieldOwner)
	}
	if err := setupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	c, err := r.watchSettings(ctrl.NewControllerManagedBy(mgr)).
		For(&webappv1.Guestbook{}, builder.WithPredicates(r.written.SkipOwnWrites())).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		// A ConfigMap the Guestbook uses but does not own.
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.guestbooksForConfigMap)).
		// A namespace created (or deleted) after its Guestbooks.
		WatchesMetadata(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.guestbooksForNamespace)).
		WithOptions(machinery.Options()).
		Named(ControllerName).
		Build(r)
	if err != nil {
		return err
	}
	// Pods are made by the StatefulSet controller: map them back by label.
	// Metadata is all the cache keeps of them. The first election starts
	// the watch: an operator with no Guestbook does not watch Pods for it.
	r.pods = machinery.NewPodWatch(c, mgr.GetCache(), guestbookForPod)
	return nil
}
