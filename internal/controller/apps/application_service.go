package apps

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
		return s.children.Delete(ctx, live, "spec.service has no ports")
	}
	obj, err := s.children.Ensure(ctx, desiredService(app, s.selector), &corev1.Service{})
	if err != nil {
		return err
	}
	s.service, _ = obj.(*corev1.Service)
	return nil
}
