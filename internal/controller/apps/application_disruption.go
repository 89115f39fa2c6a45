package apps

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileDisruptionBudget makes the PodDisruptionBudget hold
// spec.disruptionBudget through s.children, on the Deployment's Pods, and
// notes it as last seen in s. Once the field is removed, it deletes the
// budget it made; one of the name it did not make is left alone.
func (r *ApplicationReconciler) reconcileDisruptionBudget(ctx context.Context, s *applicationScope) error {
	desired := desiredDisruptionBudget(s.app, s.selector)
	if desired == nil {
		live := &policyv1.PodDisruptionBudget{}
		found, conflict, err := s.children.Applier.Observe(ctx, s.app.UID, client.ObjectKeyFromObject(s.app), live)
		if err != nil || !found || conflict != "" {
			return err
		}
		return s.children.Delete(ctx, live, "spec.disruptionBudget was removed")
	}
	obj, err := s.children.Ensure(ctx, desired, &policyv1.PodDisruptionBudget{})
	if err != nil {
		return err
	}
	s.disruptionBudget, _ = obj.(*policyv1.PodDisruptionBudget)
	return nil
}
