package apps

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// reconcileService makes the Service hold the Application's spec (the
// shared child path: apply.Applier), deletes the Service it made once the
// Application has no ports, and records what it saw in s.
func (r *ApplicationReconciler) reconcileService(ctx context.Context, s *applicationScope) error {
	app := s.app
	live := &corev1.Service{}
	found, conflict, err := r.applier().Observe(ctx, app.UID, client.ObjectKeyFromObject(app), live)
	if err != nil {
		return err
	}
	if !s.serviceWanted {
		if found && conflict == "" {
			return r.deleteService(ctx, app, live)
		}
		return nil
	}
	if conflict != "" {
		s.conflicts = append(s.conflicts, conflict)
		return nil
	}
	var current client.Object
	if found {
		current = live
	}
	out, err := r.applier().Write(ctx, desiredService(app, s.selector), current)
	if err != nil {
		return err
	}
	return s.record("Service", out, func(obj client.Object) { s.service, _ = obj.(*corev1.Service) })
}

// deleteService removes the Service the operator made for app, and only that
// one: the UID precondition guards against a same-named replacement.
func (r *ApplicationReconciler) deleteService(ctx context.Context, app *sunappsv1.Application, svc *corev1.Service) error {
	err := r.Delete(ctx, svc, client.Preconditions{UID: &svc.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "Deleted", "Delete",
		"Service %s deleted: spec.service has no ports", svc.Name)
	return nil
}
