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

package example

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
)

// DrinkReconciler reconciles a Drink object: it keeps a ConfigMap of the
// same name holding the Drink's spec, and never touches a ConfigMap of that
// name it does not control.
type DrinkReconciler struct {
	client.Client
	// APIReader reads around the cache the object of the ConfigMap's name
	// that refused its create (apply.Applier.Observe).
	APIReader client.Reader
	Recorder  events.EventRecorder
	// written holds the status writes the cache does not hold yet.
	written controllers.WrittenObjects
	// children is what the controller remembers of its children: those
	// created that the cache does not hold yet, those found in sync.
	children apply.Memory
}

// +kubebuilder:rbac:groups=example.com,resources=drinks,verbs=list;watch
// +kubebuilder:rbac:groups=example.com,resources=drinks/status,verbs=patch
// The finalizers rule lets the ConfigMap's owner reference set
// blockOwnerDeletion (OwnerReferencesPermissionEnforcement admission).
// +kubebuilder:rbac:groups=example.com,resources=drinks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// drinkScope is what one reconcile of a Drink works on.
type drinkScope struct {
	drink *examplev1.Drink
	// children reads and writes the ConfigMap and records the API server's
	// answers.
	children *controllers.Children
	// observation is what the status is computed from.
	observation observation
}

// Reconcile makes the Drink's ConfigMap hold its spec, then writes the status
// once, only when it changed, through the driver every kind follows
// (internal/controller/doc.go).
func (r *DrinkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return controllers.Reconcile(ctx, req, r.kind())
}

// kind is the Drink as the driver runs it.
func (r *DrinkReconciler) kind() *controllers.Kind[*examplev1.Drink, *drinkScope] {
	return &controllers.Kind[*examplev1.Drink, *drinkScope]{
		Name: drinkKind, Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder,
		Written: &r.written, Memory: &r.children,
		New: func() *examplev1.Drink { return &examplev1.Drink{} },
		Begin: func(_ context.Context, drink *examplev1.Drink, children *controllers.Children) *drinkScope {
			return &drinkScope{drink: drink, children: children, observation: observation{children: children}}
		},
		Phases: []func(context.Context, *drinkScope) error{
			r.reconcileConfigMap,
		},
		ComputeStatus: func(drink *examplev1.Drink, s *drinkScope) {
			drink.Status = computeStatus(drink, &s.observation)
		},
		ConflictRecheck: r.conflictRecheck,
	}
}

// conflictRecheck is 0, on purpose: unlike the other kinds, the Drink
// controller watches the foreign ConfigMaps named like a Drink
// (SetupWithManager), so the removal of one in a Drink's way brings the
// next reconcile and a Drink in conflict needs no periodic look.
func (r *DrinkReconciler) conflictRecheck() time.Duration { return 0 }

// ControllerName names the Drink controller in its logs and metrics
// (the controller label of controller-runtime's).
const ControllerName = "example-drink"

// SetupWithManager sets up the controller with the Manager. It watches the
// ConfigMaps the Drinks control, and the foreign ConfigMaps named like a
// Drink, so that a Drink in conflict recovers when the foreign one goes.
func (r *DrinkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&examplev1.Drink{}, builder.WithPredicates(r.written.SkipOwnWrites())).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.ConfigMap{},
			handler.EnqueueRequestsFromMapFunc(r.drinkForConfigMap),
			builder.WithPredicates(machinery.NotControlledByKind(drinkGroupKind))).
		WithOptions(machinery.Options()).
		Named(ControllerName).
		Complete(r)
}
