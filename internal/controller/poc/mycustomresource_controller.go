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

package poc

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
)

// Event reasons of the MyCustomResource controller, emitted on transitions of
// status.Healthy only. They differ on purpose from the other kinds' events
// (the shared Updated of Children): a MyCustomResource writes no child, it
// reports its friend Pod coming and going.
const (
	eventFriendFound = "FriendFound"
	eventFriendLost  = "FriendLost"
	eventAction      = "ObserveFriend"
)

// MyCustomResourceReconciler reconciles a MyCustomResource object: it reports
// whether the friend Pod named in its spec exists, in its own namespace, and
// is ready.
type MyCustomResourceReconciler struct {
	client.Client
	// APIReader reads the friend Pod from the API server: the cache holds
	// Pods as metadata only, without their readiness.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// written holds the status writes the cache does not hold yet.
	written controllers.WrittenObjects
	// pods is the Pod watch, started by the first reconcile
	// (machinery.LazyWatch).
	pods *machinery.LazyWatch
}

// +kubebuilder:rbac:groups=poc.test.domain,resources=mycustomresources,verbs=list;watch
// +kubebuilder:rbac:groups=poc.test.domain,resources=mycustomresources/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// mycustomresourceScope is what one reconcile of a MyCustomResource works
// on. It has no Children, on purpose: a MyCustomResource writes no child,
// it observes a friend Pod it does not own (so no child's conflict,
// refusal or stale read either).
type mycustomresourceScope struct {
	obj *pocv1.MyCustomResource
	// observation is what the status is computed from.
	observation observation
}

// Reconcile observes the friend Pod and writes the status once, only when
// it changed, through the driver every kind follows
// (internal/controller/doc.go). Events mark the transitions of
// status.Healthy.
func (r *MyCustomResourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return controllers.Reconcile(ctx, req, r.kind())
}

// mycustomresourceKind is the MyCustomResource's kind, for messages.
const mycustomresourceKind = "MyCustomResource"

// kind is the MyCustomResource as the driver runs it: no Memory, on
// purpose, since it writes no child.
func (r *MyCustomResourceReconciler) kind() *controllers.Kind[*pocv1.MyCustomResource, *mycustomresourceScope] {
	return &controllers.Kind[*pocv1.MyCustomResource, *mycustomresourceScope]{
		Name: mycustomresourceKind, Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder,
		Written: &r.written,
		New:     func() *pocv1.MyCustomResource { return &pocv1.MyCustomResource{} },
		Begin: func(_ context.Context, obj *pocv1.MyCustomResource, _ *controllers.Children) *mycustomresourceScope {
			return &mycustomresourceScope{obj: obj}
		},
		Phases: []func(context.Context, *mycustomresourceScope) error{
			r.reconcileFriend,
		},
		ComputeStatus: func(obj *pocv1.MyCustomResource, s *mycustomresourceScope) {
			obj.Status = computeStatus(obj, &s.observation)
		},
		Wrote: r.wroteStatus,
	}
}

// reconcileFriend observes the friend Pod (it writes nothing), only in the
// namespace of the MyCustomResource: in the cache, which holds Pods as
// metadata only, for whether it exists and is being deleted; then, for a
// live Pod only, from the API server for its readiness. A friend that does
// not exist costs no request; one that appears later triggers a new
// reconcile through the Pod watch, which the first reconcile starts.
func (r *MyCustomResourceReconciler) reconcileFriend(ctx context.Context, s *mycustomresourceScope) error {
	if err := r.pods.Start(); err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: s.obj.Namespace, Name: s.obj.Spec.Name}
	cached := &metav1.PartialObjectMetadata{}
	cached.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if err := r.Get(ctx, key, cached); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting friend Pod %s from the cache: %w", key, err)
	}
	if cached.DeletionTimestamp != nil {
		s.observation.pod = &corev1.Pod{ObjectMeta: cached.ObjectMeta}
		return nil
	}
	var pod corev1.Pod
	if err := r.APIReader.Get(ctx, key, &pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting friend Pod %s: %w", key, err)
	}
	s.observation.pod = &pod
	return nil
}

// wroteStatus logs a written status and records the friend events of a
// transition of status.Healthy: only after a write, so that a stale
// reconcile records none (the newer object's reconcile does).
func (r *MyCustomResourceReconciler) wroteStatus(ctx context.Context, orig, obj *pocv1.MyCustomResource, _ *mycustomresourceScope) {
	ctrl.LoggerFrom(ctx).V(1).Info("Updated status", "healthy", obj.Status.Healthy, "friend", obj.Spec.Name)
	r.recordEvents(obj, orig.Status.Healthy)
}

// recordEvents records an event when status.Healthy changed. These friend
// events are the MyCustomResource's own, on purpose: it has no children,
// so none of the shared Children events (Updated).
func (r *MyCustomResourceReconciler) recordEvents(obj *pocv1.MyCustomResource, wasHealthy bool) {
	switch {
	case obj.Status.Healthy && !wasHealthy:
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventFriendFound, eventAction,
			"Friend Pod %q found", obj.Spec.Name)
	case !obj.Status.Healthy && wasHealthy:
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventFriendLost, eventAction,
			"Friend Pod %q is gone or being deleted", obj.Spec.Name)
	}
}

// ControllerName names the MyCustomResource controller in its logs and metrics
// (the controller label of controller-runtime's).
const ControllerName = "poc-mycustomresource"

// SetupWithManager sets up the controller with the Manager: it indexes
// MyCustomResources by spec.name and maps each Pod event (Pods are watched
// as metadata only) to the MyCustomResources of the Pod's namespace naming
// that Pod. The Pod watch starts with the first reconcile, not with the
// manager: an operator with no MyCustomResource does not watch Pods for it.
func (r *MyCustomResourceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(),
		&pocv1.MyCustomResource{}, friendNameField, friendNameIndexValue); err != nil {
		return fmt.Errorf("indexing MyCustomResources by %s: %w", friendNameField, err)
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&pocv1.MyCustomResource{}, builder.WithPredicates(r.written.SkipOwnWrites())).
		WithOptions(machinery.Options()).
		Named(ControllerName).
		Build(r)
	if err != nil {
		return err
	}
	r.pods = machinery.NewPodWatch(c, mgr.GetCache(), r.requestsForPod)
	return nil
}
