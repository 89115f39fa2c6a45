package apps

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// reconcileService makes the Service hold the Application's spec through
// s.children (Ensure), which records the outcome, and notes the Service as
// last seen in s. Once the Application has no ports, it deletes the
// Service it made instead.
func (r *ApplicationReconciler) reconcileService(ctx context.Context, s *applicationScope) error {
	app := s.app
	if !s.serviceWanted {
		// A Service still there (its deletion refused) is not reported:
		// the Application asks for none.
		_, err := ensureOrDelete(ctx, s, nil, &corev1.Service{}, "spec.service has no ports")
		return err
	}
	obj, err := s.children.Ensure(ctx, desiredService(app, s.selector), &corev1.Service{})
	if err != nil {
		return err
	}
	s.service, _ = obj.(*corev1.Service)
	return nil
}
