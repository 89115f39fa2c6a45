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

// Package config holds the controller of the config.sunstrider.cn API
// group: it puts the OperatorConfiguration named default in effect.
package config

import (
	"context"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/access"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/settings"
)

// ConfigurationKey is the key of the one OperatorConfiguration the operator
// reads.
var ConfigurationKey = client.ObjectKey{Name: configv1alpha1.ConfigurationName}

// OperatorConfigurationReconciler puts the OperatorConfiguration named
// default in effect: it resolves its spec over Defaults, stores the result
// in Settings for the other reconcilers, and reports in the status what is
// in effect and what was refused. A field that applies only at start
// (controllers, watchNamespaces) makes it write the status, then call
// Restart. It runs in every replica, so that standbys have the settings
// when they take over; only the leader writes the status and events.
type OperatorConfigurationReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Settings receives the settings in effect.
	Settings *settings.Holder
	// Defaults are the settings from the manager's flags and the built-in
	// defaults: a field the spec leaves unset takes its value from there.
	Defaults settings.Settings
	// Started are the settings the process started with: the fields of
	// settings.RestartFields are in effect as they say.
	Started settings.Settings
	// Elected is closed once this replica leads (mgr.Elected()); nil means
	// it always does.
	Elected <-chan struct{}
	// Restart, when set, stops the process for its Deployment to start it
	// again; reason says why.
	Restart func(reason string)
	// Webhooks says whether the access checks run at admission (served
	// and registered): when they do not, the status says Unenforced
	// instead of the mode the spec asks for. nil: the manager serves no
	// webhooks.
	Webhooks *access.Webhooks
	// written holds the status writes the cache does not hold yet.
	written controllers.WrittenObjects
}

// The operator reads the configuration through its cache and writes its
// status. create is for the init container (`manager init-config`), which
// runs as the manager's ServiceAccount and creates the object when absent.
// get on namespaces: the manager reads the configuration at start, and
// checks that the namespaces of watchNamespaces exist.
// +kubebuilder:rbac:groups=config.sunstrider.cn,resources=operatorconfigurations,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=config.sunstrider.cn,resources=operatorconfigurations/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// The operator's own init container creates the configuration from the
// installer's values, childAccess included: a change of childAccess needs
// delegate (the OperatorConfiguration's validating webhook).
// +kubebuilder:rbac:groups=config.sunstrider.cn,resources=operatorconfigurations,verbs=delegate

// operatorConfigurationScope carries one reconcile's OperatorConfiguration
// and what it observed. The kind has no children: no Children.
type operatorConfigurationScope struct {
	cfg *configv1alpha1.OperatorConfiguration
	observation
}

// Reconcile resolves the configuration, puts it in effect and reports,
// through the driver every kind follows (internal/controller/doc.go).
func (r *OperatorConfigurationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.NamespacedName != ConfigurationKey {
		// The API server refuses any other name (CEL).
		return ctrl.Result{}, nil
	}
	return controllers.Reconcile(ctx, req, r.kind())
}

// operatorConfigurationKind is the OperatorConfiguration's kind.
const operatorConfigurationKind = "OperatorConfiguration"

// kind is the OperatorConfiguration as the driver runs it. On purpose,
// unlike the other kinds: it writes no child (no Memory); it runs in every
// replica and only the leader writes the status (Leading); a field that
// applies at start makes it call Restart once the status says so, never
// after a write found stale (Current); a RestartRequired Ready records a
// Normal event (Wrote); a deleted configuration keeps the settings in
// effect (Gone).
func (r *OperatorConfigurationReconciler) kind() *controllers.Kind[*configv1alpha1.OperatorConfiguration, *operatorConfigurationScope] {
	return &controllers.Kind[*configv1alpha1.OperatorConfiguration, *operatorConfigurationScope]{
		Name: operatorConfigurationKind, Client: r.Client, Recorder: r.Recorder, Written: &r.written,
		New: func() *configv1alpha1.OperatorConfiguration { return &configv1alpha1.OperatorConfiguration{} },
		Begin: func(_ context.Context, cfg *configv1alpha1.OperatorConfiguration, _ *controllers.Children) *operatorConfigurationScope {
			return &operatorConfigurationScope{cfg: cfg}
		},
		Phases: []func(context.Context, *operatorConfigurationScope) error{
			r.reconcileSettings,
			r.observeAccessChecks,
		},
		ComputeStatus: func(cfg *configv1alpha1.OperatorConfiguration, s *operatorConfigurationScope) {
			cfg.Status = computeStatus(cfg, &s.observation)
		},
		Wrote: func(_ context.Context, orig, cfg *configv1alpha1.OperatorConfiguration, _ *operatorConfigurationScope) {
			r.recordEvents(orig, cfg)
		},
		Current: r.restartIfNeeded,
		Gone: func(ctx context.Context, key types.NamespacedName) {
			// Deleted: keep what is in effect. The init container creates
			// it again at the next start, from its initial content.
			ctrl.LoggerFrom(ctx).Info("OperatorConfiguration deleted: the settings in effect stay until the operator restarts, "+
				"which creates it again with its initial content", "name", key.Name)
		},
		Leading: r.leading,
	}
}

// restartIfNeeded calls Restart when a field that applies only at start
// changed: once the status says so (or, in a replica that does not lead,
// at once).
func (r *OperatorConfigurationReconciler) restartIfNeeded(_ context.Context, _ *configv1alpha1.OperatorConfiguration, s *operatorConfigurationScope) {
	if len(s.restart) > 0 && r.Restart != nil {
		r.Restart(fmt.Sprintf("%s changed and take effect at start", strings.Join(s.restart, " and ")))
	}
}

// reconcileSettings resolves the spec over the defaults and the settings in
// effect, stores what this process can put in effect in Settings, and
// records in s what it resolved.
func (r *OperatorConfigurationReconciler) reconcileSettings(ctx context.Context, s *operatorConfigurationScope) error {
	inEffect := r.Settings.Load()
	want, refused, err := settings.Resolve(&s.cfg.Spec, &r.Defaults, inEffect, func(name string) (bool, error) { return machinery.NamespaceExists(ctx, r.Client, name) })
	if err != nil {
		return err
	}
	s.refused = refused
	s.restart = settings.RestartNeeded(&r.Started, &want)
	// What this process can put in effect: the live fields now, the others
	// as it started.
	live := want
	live.Controllers, live.WatchNamespaces = r.Started.Controllers, r.Started.WatchNamespaces
	s.inEffect = live
	if changed := changedFields(inEffect, &live); len(changed) > 0 {
		r.Settings.Store(live)
		ctrl.LoggerFrom(ctx).Info("Configuration applied", "changed", changed)
	}
	return nil
}

// observeAccessChecks notes in s why no access check runs at admission,
// if none does: the status then says Unenforced (AccessChecks=False).
func (r *OperatorConfigurationReconciler) observeAccessChecks(ctx context.Context, s *operatorConfigurationScope) error {
	why, err := r.Webhooks.Unenforced(ctx, r.Client)
	if err != nil {
		return err
	}
	s.unenforced = why
	return nil
}

// leading tells whether this replica leads (Elected is closed).
func (r *OperatorConfigurationReconciler) leading() bool {
	if r.Elected == nil {
		return true
	}
	select {
	case <-r.Elected:
		return true
	default:
		return false
	}
}

// changedFields names the settings that differ between old and new.
func changedFields(old, new *settings.Settings) []string {
	var changed []string
	if old.GuestbookImage != new.GuestbookImage {
		changed = append(changed, "guestbookImage")
	}
	if !equality.Semantic.DeepEqual(old.GuestbookResources, new.GuestbookResources) {
		changed = append(changed, "guestbookResources")
	}
	if old.ConflictRecheckInterval != new.ConflictRecheckInterval {
		changed = append(changed, "conflictRecheckInterval")
	}
	if old.LogLevel != new.LogLevel {
		changed = append(changed, "logLevel")
	}
	if old.ChildAccess != new.ChildAccess {
		changed = append(changed, "childAccess")
	}
	if !slices.Equal(old.GuestbookSystemNamespaces, new.GuestbookSystemNamespaces) {
		changed = append(changed, "guestbookSystemNamespaces")
	}
	if old.Controllers != new.Controllers {
		changed = append(changed, "controllers")
	}
	if !slices.Equal(old.WatchNamespaces, new.WatchNamespaces) {
		changed = append(changed, "watchNamespaces")
	}
	return changed
}

// recordEvents records a Normal event when a written status makes Ready
// RestartRequired, or changes why: the operator is about to restart; and a
// Warning one when it makes AccessChecks False, or changes why: no access
// check runs at admission. A refused field is told by StatusWriter (a
// Warning when Stalled).
func (r *OperatorConfigurationReconciler) recordEvents(orig, cfg *configv1alpha1.OperatorConfiguration) {
	if now := accessChecksCondition(cfg); now != nil && now.Status == metav1.ConditionFalse {
		if before := accessChecksCondition(orig); before == nil || before.Status != now.Status || before.Message != now.Message {
			r.Recorder.Eventf(cfg, nil, corev1.EventTypeWarning, configv1alpha1.ReasonUnenforced, "CheckAccess", "%s", now.Message)
		}
	}
	now := readyCondition(cfg)
	if now == nil || now.Reason != configv1alpha1.ReasonRestartRequired {
		return
	}
	if before := readyCondition(orig); before != nil && before.Reason == now.Reason && before.Message == now.Message {
		return
	}
	r.Recorder.Eventf(cfg, nil, corev1.EventTypeNormal, now.Reason, "Restart", "%s", now.Message)
}

// ControllerName names the OperatorConfiguration controller in its logs and metrics
// (the controller label of controller-runtime's).
const ControllerName = "config-operatorconfiguration"

// SetupWithManager sets up the controller with the Manager. It runs in
// every replica (no leader election).
func (r *OperatorConfigurationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	opts := machinery.Options()
	opts.NeedLeaderElection = new(false)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&configv1alpha1.OperatorConfiguration{}, builder.WithPredicates(predicate.NewPredicateFuncs(
			func(o client.Object) bool { return o.GetName() == configv1alpha1.ConfigurationName }), r.written.SkipOwnWrites())).
		// A namespace of watchNamespaces created or deleted.
		// A webhook configuration registered, changed or removed: whether
		// the access checks run (observeAccessChecks). Few objects, read
		// from the cache at each reconcile.
		Watches(&admissionregistrationv1.ValidatingWebhookConfiguration{}, handler.EnqueueRequestsFromMapFunc(
			func(context.Context, client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: ConfigurationKey}}
			})).
		WatchesMetadata(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(
			func(context.Context, client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: ConfigurationKey}}
			}), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return false },
		}))
	if r.Elected != nil {
		// Write the status once this replica leads.
		b = b.WatchesRawSource(source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			go func() {
				select {
				case <-r.Elected:
					q.Add(reconcile.Request{NamespacedName: ConfigurationKey})
				case <-ctx.Done():
				}
			}()
			return nil
		}))
	}
	return b.WithOptions(opts).Named(ControllerName).Complete(r)
}
