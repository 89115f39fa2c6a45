package apps

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileDisruptionBudget makes the PodDisruptionBudget hold
// spec.disruptionBudget, on the Deployment's Pods, and notes it as last
// seen in s; once the field is removed, it deletes the budget it made.
func (r *ApplicationReconciler) reconcileDisruptionBudget(ctx context.Context, s *applicationScope) error {
	var desired client.Object
	if pdb := desiredDisruptionBudget(s.app, s.selector); pdb != nil {
		desired = pdb
	}
	obj, err := ensureOrDelete(ctx, s, desired, &policyv1.PodDisruptionBudget{}, "spec.disruptionBudget was removed")
	s.disruptionBudget, _ = obj.(*policyv1.PodDisruptionBudget)
	return err
}

// reconcileAutoscaler makes the HorizontalPodAutoscaler hold
// spec.autoscaling, aimed at the Application, and notes it as last seen in
// s; once the field is removed, it deletes the autoscaler it made.
func (r *ApplicationReconciler) reconcileAutoscaler(ctx context.Context, s *applicationScope) error {
	var desired client.Object
	if hpa := desiredAutoscaler(s.app); hpa != nil {
		desired = hpa
	}
	obj, err := ensureOrDelete(ctx, s, desired, &autoscalingv2.HorizontalPodAutoscaler{}, "spec.autoscaling was removed")
	s.autoscaler, _ = obj.(*autoscalingv2.HorizontalPodAutoscaler)
	return err
}

// ensureOrDelete makes an optional child of the Application hold desired
// through s.children and returns it as last seen; when desired is nil (its
// field removed), it deletes the child of live's type the Application
// made, if any, giving why, and returns it only when it is still there
// (its deletion refused, or already under way): one of the name it did
// not make is left alone, and is no conflict when none is asked for. live
// is an empty object of the child's type.
func ensureOrDelete(ctx context.Context, s *applicationScope, desired, live client.Object, why string) (client.Object, error) {
	if desired != nil {
		return s.children.Ensure(ctx, desired, live)
	}
	found, conflict, err := s.children.Applier.Observe(ctx, s.app.UID, client.ObjectKeyFromObject(s.app), live)
	if err != nil || !found || conflict != "" {
		return nil, err
	}
	deleted := len(s.children.Deleted)
	if err := s.children.Delete(ctx, live, why); err != nil || len(s.children.Deleted) > deleted {
		return nil, err
	}
	return live, nil
}
