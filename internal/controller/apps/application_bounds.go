package apps

import (
	"context"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
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
// the reconcile. The verdict holds for a generation: a spec within its
// bounds is marshalled once per generation, not at every reconcile.
func (r *ApplicationReconciler) checkBounds(ctx context.Context, s *applicationScope) error {
	app := s.app
	if r.bounded.within(app) {
		return nil
	}
	errs := sunappsv1.ValidateSizes(app)
	if len(errs) == 0 {
		r.bounded.remember(app)
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

// boundsMemo remembers, per Application, the UID and generation whose spec
// was found within its bounds: the spec changes only with the generation.
type boundsMemo struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]boundsKey
}

type boundsKey struct {
	uid        types.UID
	generation int64
}

func (m *boundsMemo) within(app *sunappsv1.Application) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.seen[client.ObjectKeyFromObject(app)]
	return ok && k == boundsKey{app.UID, app.Generation}
}

func (m *boundsMemo) remember(app *sunappsv1.Application) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[types.NamespacedName]boundsKey{}
	}
	m.seen[client.ObjectKeyFromObject(app)] = boundsKey{app.UID, app.Generation}
}

func (m *boundsMemo) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, key)
}
