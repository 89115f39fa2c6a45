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
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/config"
	controllers "sunstrider.cn/operator/internal/controller"
)

// GuestbookReconciler reconciles a Guestbook object: it runs the instances
// in a StatefulSet, keeps exactly one ready instance active behind the
// Service, and reports what it saw in the status.
type GuestbookReconciler struct {
	client.Client
	// APIReader reads from the API server, bypassing the cache: it confirms
	// that a child is absent before creating it and gives the fresh view of
	// the Pods the relabelling acts on.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Image is the guestbook image; DefaultGuestbookImage when empty.
	Image string
	// ConflictRecheck is how often a Guestbook blocked by a foreign child
	// looks again; controllers.ConflictRecheckInterval when zero.
	ConflictRecheck time.Duration
	// Settings, when set, are the live operator settings
	// (OperatorConfiguration): their image, resources and conflict recheck
	// interval replace Image and ConflictRecheck, and a change of them
	// reconciles every Guestbook.
	Settings *config.Holder
	// written holds the status writes the cache does not hold yet.
	written controllers.WrittenObjects
}

// Guestbooks are read from the cache only. Setting blockOwnerDeletion on the
// children's owner references needs update on guestbooks/finalizers.
// Children: get is the uncached confirmation before a create; create and
// patch are the server-side apply that creates or updates them. Pods: the
// uncached list before relabelling, and the role label patch.
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks,verbs=list;watch
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/status,verbs=patch
// +kubebuilder:rbac:groups=webapp.my.domain,resources=guestbooks/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile observes a Guestbook and its workload, acts to make the workload
// match the spec, and writes the status computed from what it observed.
func (r *GuestbookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	gb := &webappv1.Guestbook{}
	if err := r.written.Get(ctx, r.Client, req.NamespacedName, gb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !gb.DeletionTimestamp.IsZero() {
		// The garbage collector removes the children through their owner
		// references.
		return ctrl.Result{}, nil
	}

	ws := r.settings()
	obs, err := r.reconcileWorkload(ctx, gb, ws)
	if apierrors.IsConflict(err) {
		// A Pod changed between the read and the relabelling: its newer
		// version is on its way through the watch and triggers a new
		// reconcile, which acts on it.
		ctrl.LoggerFrom(ctx).V(1).Info("Pod changed while relabelling, waiting for its event", "error", err.Error())
		return ctrl.Result{}, nil
	}
	var refused *refusal
	if errors.As(err, &refused) {
		// An answer of the API server: the status says it.
		obs.refused = refused.message
	} else if err != nil {
		// The API server did not answer: retry, the status unchanged.
		return ctrl.Result{}, err
	}

	orig := gb.DeepCopy()
	setStatus(gb, obs)
	if _, _, err := r.statusWriter().Write(ctx, orig, gb); err != nil {
		return ctrl.Result{}, err
	}
	if refused != nil {
		return ctrl.Result{}, refused.err
	}
	if obs.conflict == "" {
		return ctrl.Result{}, nil
	}
	// The manager caches only the children it labelled: the removal of the
	// foreign object in the way wakes nobody, so look again.
	return ctrl.Result{RequeueAfter: ws.conflictRecheck}, nil
}

// reconcileWorkload runs the phases in order; a missing namespace or a
// conflict stops them. A write the API server refuses does not: the
// workload already running is still observed and its election still runs
// (a failover must not wait for a person to lift a quota or a policy); the
// first refusal is returned beside the observation.
func (r *GuestbookReconciler) reconcileWorkload(ctx context.Context, gb *webappv1.Guestbook,
	ws workloadSettings) (observation, error) {
	obs := observation{namespace: namespaceOf(gb), size: gb.Spec.Size}

	exists, err := r.namespaceExists(ctx, obs.namespace)
	if err != nil || !exists {
		obs.namespaceMissing = !exists
		return obs, err
	}

	var refused *refusal
	answered := func(err error) error {
		if ref := (*refusal)(nil); errors.As(err, &ref) {
			if refused == nil {
				refused = ref
			}
			return nil
		}
		return err
	}
	checksum, err := r.reconcileConfigMap(ctx, gb)
	if err = answered(err); err != nil {
		return obs, err
	}

	liveSts := client.Object(&appsv1.StatefulSet{})
	var conflict string
	if refused != nil {
		// Without its ConfigMap, a new template would stop the instances:
		// the StatefulSet is only observed.
		found, conflicting, err := r.observeChild(ctx, gb, client.ObjectKey{Namespace: obs.namespace, Name: gb.Name}, liveSts)
		if err != nil {
			return obs, err
		}
		if conflict = conflicting; !found {
			liveSts = nil
		}
	} else {
		sts, err := desiredStatefulSetWith(gb, ws, checksum)
		if err != nil {
			return obs, err
		}
		liveSts, conflict, err = r.ensureChild(ctx, gb, sts, liveSts)
		if err = answered(err); err != nil {
			return obs, err
		}
	}
	if obs.conflict = conflict; conflict != "" {
		return obs, nil
	}
	obs.statefulSet, _ = liveSts.(*appsv1.StatefulSet)

	svc, err := desiredService(gb)
	if err != nil {
		return obs, err
	}
	_, obs.conflict, err = r.ensureChild(ctx, gb, svc, &corev1.Service{})
	if err = answered(err); err != nil || obs.conflict != "" {
		return obs, err
	}

	// The cache holds Pods as metadata only; their readiness is read from
	// the API server, which also keeps the election off stale copies.
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(obs.namespace), client.MatchingLabels{LabelGuestbook: gb.Name}); err != nil {
		return obs, fmt.Errorf("listing pods of guestbook %s: %w", gb.Name, err)
	}
	elected, err := r.reconcileRoles(ctx, gb, pods.Items)
	if err != nil {
		return obs, err
	}
	obs.instances, obs.active, obs.standby = elected.instances, elected.active, elected.standby
	if refused != nil {
		return obs, refused
	}
	return obs, nil
}

// statusWriter is the shared status path (compare, patch, a Warning when
// the Guestbook becomes Stalled: a conflict, a missing namespace).
func (r *GuestbookReconciler) statusWriter() controllers.StatusWriter {
	return controllers.StatusWriter{Client: r.Client, Recorder: r.Recorder, Conditions: func(o client.Object) []metav1.Condition {
		return o.(*webappv1.Guestbook).Status.Conditions
	}, Written: &r.written}
}

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
	return r.watchSettings(ctrl.NewControllerManagedBy(mgr)).
		For(&webappv1.Guestbook{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		// A ConfigMap the Guestbook uses but does not own.
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.guestbooksForConfigMap)).
		// Pods are made by the StatefulSet controller: map them back by
		// label. Metadata is all the cache keeps of them.
		WatchesMetadata(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(guestbookForPod)).
		// A namespace created (or deleted) after its Guestbooks.
		WatchesMetadata(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.guestbooksForNamespace)).
		WithOptions(controllers.Options()).
		Named("webapp-guestbook").
		Complete(r)
}
