package apps

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// reconcileDeployment makes the Deployment hold the Application's spec
// through s.children, which records the outcome, and notes in s the
// Deployment as last seen and its selector. Observe, then Write rather than
// Ensure: the selector depends on the existing Deployment's.
func (r *ApplicationReconciler) reconcileDeployment(ctx context.Context, s *applicationScope) error {
	app := s.app
	live := &appsv1.Deployment{}
	found, conflict, err := s.children.Observe(ctx, client.ObjectKeyFromObject(app), live)
	if err != nil {
		return err
	}
	if conflict {
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
		// Application-only: the API server would refuse the write as
		// invalid; report it in the user's terms (SelectorImmutable).
		s.deployment = existing
		s.selectorImmutable = err.Error()
		return nil
	}

	var current client.Object
	if existing != nil {
		current = existing
	}
	obj, err := s.children.Write(ctx, desiredDeployment(app, selector), current)
	if err != nil {
		return err
	}
	s.deployment, _ = obj.(*appsv1.Deployment)
	if existing != nil && s.deployment != nil && s.deployment != existing &&
		!equality.Semantic.DeepEqual(existing.Spec.Template, s.deployment.Spec.Template) {
		// The template changed: what ran until now is a revision
		// (reconcileRevisions).
		s.previousTemplate = existing.Spec.Template.DeepCopy()
		s.previousSince = existing.CreationTimestamp.Time
		if deploymentRollout(existing).Status == kstatus.CurrentStatus {
			s.previousOutcome = sunappsv1.RevisionRolledOut
		}
	}
	return nil
}
