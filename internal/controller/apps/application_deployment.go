package apps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
)

// reconcileDeployment makes the Deployment hold the Application's spec
// (the shared child path: apply.Applier) and records what it saw in s.
func (r *ApplicationReconciler) reconcileDeployment(ctx context.Context, s *applicationScope) error {
	app := s.app
	live := &appsv1.Deployment{}
	found, conflict, err := r.applier().Observe(ctx, app.UID, client.ObjectKeyFromObject(app), live)
	if err != nil {
		return err
	}
	if conflict != "" {
		s.conflicts = append(s.conflicts, conflict)
		// The Service still selects the Pods this Application would have.
		s.selector, _ = applicationSelector(app, nil)
		return nil
	}
	var existing *appsv1.Deployment
	if found {
		existing = live
	}
	selector, err := applicationSelector(app, existing)
	s.selector = selector
	if errors.Is(err, errSelectorImmutable) {
		s.deployment = existing
		s.failure = &failure{reason: sunappsv1.ReasonSelectorImmutable, message: err.Error()}
		return nil
	}

	var current client.Object
	if existing != nil {
		current = existing
	}
	out, err := r.applier().Write(ctx, desiredDeployment(app, selector), current)
	if err != nil {
		return err
	}
	return s.record("Deployment", out, func(obj client.Object) { s.deployment, _ = obj.(*appsv1.Deployment) })
}

// applier is the shared child path, reading through the cache and the API
// server this reconciler was given.
func (r *ApplicationReconciler) applier() *apply.Applier {
	return &apply.Applier{Client: r.Client, APIReader: r.APIReader}
}

// record notes in s what applying a child of kind did: the live child (set
// with setLive; after a refused write, the child as it was), a refusal as
// the failure the status reports, a stale read, the write for one event. A
// refusal other than Invalid is returned too, so the reconcile is retried
// (a quota or an admission policy may change); Invalid needs a new spec,
// whose event triggers the next reconcile.
func (s *applicationScope) record(kind string, out apply.Outcome, setLive func(client.Object)) error {
	if out.Live != nil {
		setLive(out.Live)
	}
	s.stale = s.stale || out.Stale
	switch out.Action {
	case apply.Created:
		s.created = append(s.created, kind)
	case apply.Updated:
		s.updated = append(s.updated, kind)
	}
	if out.Rejected == nil {
		return nil
	}
	if s.failure == nil {
		s.failure = &failure{reason: sunappsv1.ReasonApplyFailed, message: apply.RefusalMessage(kind, out.Rejected)}
	}
	if apierrors.IsInvalid(out.Rejected) {
		return nil
	}
	return fmt.Errorf("applying %s %s/%s: %w", kind, s.app.Namespace, s.app.Name, out.Rejected)
}

// recordEvents logs the children this reconcile wrote and emits one Updated
// event when it changed existing ones (a new spec, or a child someone else
// had changed put back). Creating the children is
// the expected outcome of creating an Application: the Ready condition tells
// it, and an Event per Application would cost the API server a write more
// (and the operator an Event kept in its broadcaster's cache) for each one.
func (r *ApplicationReconciler) recordEvents(ctx context.Context, s *applicationScope) {
	if len(s.created) > 0 {
		ctrl.LoggerFrom(ctx).Info("Applied children", "reason", "Created", "kinds", s.created)
	}
	if len(s.updated) > 0 {
		note := fmt.Sprintf("Updated %s %s", strings.Join(s.updated, " and "), s.app.Name)
		r.Recorder.Eventf(s.app, nil, corev1.EventTypeNormal, ReasonUpdated, "Apply", note)
		ctrl.LoggerFrom(ctx).Info("Applied children", "reason", ReasonUpdated, "kinds", s.updated)
	}
}

// ReasonUpdated is the reason of the Normal Event recorded on an Application
// when the operator changed its existing Deployment or Service.
const ReasonUpdated = "Updated"
