package apps

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// checkBounds refuses a spec that is beyond the bounds the validating
// webhook enforces (sunappsv1.ValidateSizes), before any phase copies it
// into a child: with the webhooks off (--enable-webhooks=false) or not
// registered (make run), such a spec is stored, and the bounds exist to
// keep the operator's memory in hand. It notes why in s (SpecTooLarge,
// Stalled), and the Deployment as it is, for the status; Stop then ends
// the reconcile. Checked at every reconcile: marshalling the spec is cheap
// next to the reconcile, and a remembered verdict would be state kept per
// Application.
func (r *ApplicationReconciler) checkBounds(ctx context.Context, s *applicationScope) error {
	app := s.app
	errs := sunappsv1.ValidateSizes(app)
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Field + " " + e.Detail
	}
	s.tooLarge = strings.Join(msgs, "; ") + ". Nothing is copied into the children until the spec is within its " +
		"bounds (the validating webhook refuses such a spec at admission; it did not run for this one)"
	ctrl.LoggerFrom(ctx).Info("Spec beyond its bounds: not copied into the children", "errors", errs.ToAggregate().Error())
	live := &appsv1.Deployment{}
	found, _, err := s.children.Observe(ctx, client.ObjectKeyFromObject(app), live)
	if err != nil {
		return err
	}
	if found {
		s.deployment = live
		s.selector = live.Spec.Selector
	}
	return nil
}
