package apps

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// reconcileService makes the Service hold the Application's spec through
// s.children (Ensure), which records the outcome, and notes the Service as
// last seen in s. Once the Application has no ports, it deletes the
// Service it made instead.
func (r *ApplicationReconciler) reconcileService(ctx context.Context, s *applicationScope) error {
	app := s.app
	if !s.serviceWanted {
		// Read through the shared child path without recording: a foreign
		// Service of the name is no conflict when the Application asks for
		// none.
		live := &corev1.Service{}
		found, conflict, err := s.children.Applier.Observe(ctx, app.UID, client.ObjectKeyFromObject(app), live)
		if err != nil || !found || conflict != "" {
			return err
		}
		if err := r.deleteService(ctx, app, live); err != nil {
			return err
		}
		s.children.Applier.Deleted(live)
		return nil
	}
	obj, err := s.children.Ensure(ctx, desiredService(app, s.selector), &corev1.Service{})
	if err != nil {
		return err
	}
	s.service, _ = obj.(*corev1.Service)
	return nil
}

// deleteService removes the Service the operator made for app, and only that
// one: the UID precondition guards against a same-named replacement. A
// refused delete is returned too, and retried with backoff (that reconcile
// writes no status): Children records writes, not deletes.
func (r *ApplicationReconciler) deleteService(ctx context.Context, app *sunappsv1.Application, svc *corev1.Service) error {
	err := r.Delete(ctx, svc, client.Preconditions{UID: &svc.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "Deleted", "Delete",
		"Service %s deleted: spec.service has no ports", svc.Name)
	return nil
}
