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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	controllers "sunstrider.cn/operator/internal/controller"
)

// Event reasons of the MyCustomResource controller, emitted on transitions of
// status.Healthy only.
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
}

// +kubebuilder:rbac:groups=poc.test.domain,resources=mycustomresources,verbs=list;watch
// +kubebuilder:rbac:groups=poc.test.domain,resources=mycustomresources/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile observes the friend Pod and writes the status once,
// only when it changed. Events mark the transitions of status.Healthy.
func (r *MyCustomResourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)

	var obj pocv1.MyCustomResource
	if err := r.written.Get(ctx, r.Client, req.NamespacedName, &obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	obs, err := r.observeFriend(ctx, &obj)
	if err != nil {
		return ctrl.Result{}, err
	}

	orig := obj.DeepCopy()
	computeStatus(&obj, obs)
	// A patch computed from a stale cached object is dropped instead of
	// bumping lastTransitionTimes and repeating events.
	if written, _, err := r.statusWriter().Write(ctx, orig, &obj); err != nil || !written {
		return ctrl.Result{}, err
	}
	log.V(1).Info("Updated status", "healthy", obj.Status.Healthy, "friend", obj.Spec.Name)
	r.recordTransition(&obj, orig.Status.Healthy)
	return ctrl.Result{}, nil
}

// observeFriend looks for the friend Pod, only in the namespace of obj: in
// the cache, which holds Pods as metadata only, for whether it exists and
// is being deleted; then, for a live Pod only, from the API server for its
// readiness. A friend that does not exist costs no request; one that appears
// later triggers a new reconcile through the Pod watch.
func (r *MyCustomResourceReconciler) observeFriend(ctx context.Context, obj *pocv1.MyCustomResource) (friendObservation, error) {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.Name}
	cached := &metav1.PartialObjectMetadata{}
	cached.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if err := r.Get(ctx, key, cached); err != nil {
		if apierrors.IsNotFound(err) {
			return friendObservation{}, nil
		}
		return friendObservation{}, fmt.Errorf("getting friend Pod %s from the cache: %w", key, err)
	}
	if cached.DeletionTimestamp != nil {
		return friendObservation{pod: &corev1.Pod{ObjectMeta: cached.ObjectMeta}}, nil
	}
	var pod corev1.Pod
	if err := r.APIReader.Get(ctx, key, &pod); err != nil {
		if apierrors.IsNotFound(err) {
			return friendObservation{}, nil
		}
		return friendObservation{}, fmt.Errorf("getting friend Pod %s: %w", key, err)
	}
	return friendObservation{pod: &pod}, nil
}

// statusWriter is the shared status path (compare, patch).
func (r *MyCustomResourceReconciler) statusWriter() controllers.StatusWriter {
	return controllers.StatusWriter{Client: r.Client, Recorder: r.Recorder, Conditions: func(o client.Object) []metav1.Condition {
		return o.(*pocv1.MyCustomResource).Status.Conditions
	}, Written: &r.written}
}

// recordTransition emits an event when status.Healthy changed.
func (r *MyCustomResourceReconciler) recordTransition(obj *pocv1.MyCustomResource, wasHealthy bool) {
	switch {
	case obj.Status.Healthy && !wasHealthy:
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventFriendFound, eventAction,
			"Friend Pod %q found", obj.Spec.Name)
	case !obj.Status.Healthy && wasHealthy:
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, eventFriendLost, eventAction,
			"Friend Pod %q is gone or being deleted", obj.Spec.Name)
	}
}

// SetupWithManager sets up the controller with the Manager: it indexes
// MyCustomResources by spec.name and maps each Pod event (Pods are watched
// as metadata only) to the MyCustomResources of the Pod's namespace naming
// that Pod.
func (r *MyCustomResourceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(),
		&pocv1.MyCustomResource{}, friendNameField, friendNameIndexValue); err != nil {
		return fmt.Errorf("indexing MyCustomResources by %s: %w", friendNameField, err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&pocv1.MyCustomResource{}).
		WatchesMetadata(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.requestsForPod)).
		WithOptions(controllers.Options()).
		Named("poc-mycustomresource").
		Complete(r)
}
