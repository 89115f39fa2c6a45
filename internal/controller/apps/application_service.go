package apps

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
)

// reconcileService applies the desired Service when the live one differs,
// deletes the Service it made once the Application has no ports, and records
// what it saw in s.
func (r *ApplicationReconciler) reconcileService(ctx context.Context, s *applicationScope) error {
	app := s.app
	live := &corev1.Service{}
	found, err := apply.Get(ctx, r.Client, r.APIReader, client.ObjectKeyFromObject(app), live)
	if err != nil {
		return err
	}
	controlled := found && apply.IsOurs(live, app.UID)
	if !s.serviceWanted {
		if controlled {
			return r.deleteService(ctx, app, live)
		}
		return nil
	}
	if found && !controlled {
		s.conflicts = append(s.conflicts, fmt.Sprintf("Service %s/%s", live.Namespace, live.Name))
		return nil
	}

	desired := desiredService(app, s.selector)
	if err := apply.SetHash(desired); err != nil {
		return err
	}
	if found {
		inSync, err := apply.InSync(desired, live)
		if err != nil {
			return err
		}
		if inSync {
			s.service = live
			return nil
		}
		if err := r.reclaimPorts(ctx, live, desired); err != nil {
			return err
		}
	}
	cfg, err := apply.Into[corev1ac.ServiceApplyConfiguration](desired)
	if err != nil {
		return err
	}
	cfg.Status = nil
	if err := r.Apply(ctx, cfg, client.FieldOwner(apply.FieldOwner), client.ForceOwnership); err != nil {
		if apierrors.IsInvalid(err) {
			if found {
				s.service = live
			}
			if s.failure == nil {
				s.failure = &failure{reason: sunappsv1.ReasonApplyFailed, message: fmt.Sprintf("Service rejected: %v", err)}
			}
			return nil
		}
		return fmt.Errorf("applying Service %s/%s: %w", app.Namespace, app.Name, err)
	}
	applied, err := apply.Into[corev1.Service](cfg)
	if err != nil {
		return err
	}
	s.service = applied
	s.recordApplied("Service", found)
	return nil
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

// reclaimPorts puts back the port list of a Service whose ports someone else
// added or changed by hand. Server-side apply restores the ports the
// operator owns but cannot remove ports another field manager now owns (a
// hand-edited port becomes one), which leaves duplicates the API server
// rejects. An update of the port list alone, guarded by the resourceVersion,
// takes them back; nodePorts the server assigned are kept.
func (r *ApplicationReconciler) reclaimPorts(ctx context.Context, live, desired *corev1.Service) error {
	type key struct {
		port     int32
		protocol corev1.Protocol
	}
	keyOf := func(p corev1.ServicePort) key {
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		return key{p.Port, p.Protocol}
	}
	want := make(map[key]bool, len(desired.Spec.Ports))
	for _, p := range desired.Spec.Ports {
		want[keyOf(p)] = true
	}
	assigned := make(map[key]int32, len(live.Spec.Ports))
	extra := false
	for _, p := range live.Spec.Ports {
		assigned[keyOf(p)] = p.NodePort
		extra = extra || !want[keyOf(p)]
	}
	if !extra {
		return nil
	}
	ports := make([]corev1.ServicePort, len(desired.Spec.Ports))
	for i, p := range desired.Spec.Ports {
		if p.NodePort == 0 {
			p.NodePort = assigned[keyOf(p)]
		}
		ports[i] = p
	}
	updated := live.DeepCopy()
	updated.Spec.Ports = ports
	if err := r.Update(ctx, updated, client.FieldOwner(apply.FieldOwner)); err != nil {
		return fmt.Errorf("reclaiming the ports of Service %s/%s: %w", live.Namespace, live.Name, err)
	}
	return nil
}
