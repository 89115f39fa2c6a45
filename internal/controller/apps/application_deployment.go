package apps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
)

// reconcileDeployment applies the desired Deployment when the live one
// differs, and records what it saw in s.
func (r *ApplicationReconciler) reconcileDeployment(ctx context.Context, s *applicationScope) error {
	app := s.app
	live := &appsv1.Deployment{}
	found, err := apply.Get(ctx, r.Client, r.APIReader, client.ObjectKeyFromObject(app), live)
	if err != nil {
		return err
	}
	if found && !apply.IsOurs(live, app.UID) {
		s.conflicts = append(s.conflicts, fmt.Sprintf("Deployment %s/%s", live.Namespace, live.Name))
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
		s.deployment = live
		s.failure = &failure{reason: sunappsv1.ReasonSelectorImmutable, message: err.Error()}
		return nil
	}

	desired := desiredDeployment(app, selector)
	if err := apply.SetHash(desired); err != nil {
		return err
	}
	if found {
		inSync, err := apply.InSync(desired, live)
		if err != nil {
			return err
		}
		if inSync {
			s.deployment = live
			return nil
		}
	}

	cfg, err := apply.Into[appsv1ac.DeploymentApplyConfiguration](desired)
	if err != nil {
		return err
	}
	cfg.Status = nil
	if err := r.Apply(ctx, cfg, client.FieldOwner(apply.FieldOwner), client.ForceOwnership); err != nil {
		if apierrors.IsInvalid(err) {
			// Retrying cannot help: the spec must change, which triggers a reconcile.
			s.deployment = existing
			s.failure = &failure{reason: sunappsv1.ReasonApplyFailed, message: fmt.Sprintf("Deployment rejected: %v", err)}
			return nil
		}
		return fmt.Errorf("applying Deployment %s/%s: %w", app.Namespace, app.Name, err)
	}
	applied, err := apply.Into[appsv1.Deployment](cfg)
	if err != nil {
		return err
	}
	s.deployment = applied
	s.recordApplied("Deployment", found)
	return nil
}

// recordApplied notes a child written by this reconcile, for one event.
func (s *applicationScope) recordApplied(kind string, existed bool) {
	if existed {
		s.updated = append(s.updated, kind)
		return
	}
	s.created = append(s.created, kind)
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
