package apps

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// reconcileRoute makes the HTTPRoute hold spec.route, sending to the
// Application's Service, and notes it as last seen in s; once the field is
// removed, it deletes the route it made. A cluster without the Gateway API
// is no error: the Application says so (RouteAPIMissing) and the rest of
// it is reconciled; it looks again every recheck interval, and picks the
// route up once the API is installed, without a restart.
func (r *ApplicationReconciler) reconcileRoute(ctx context.Context, s *applicationScope) error {
	if s.app.Spec.Route == nil {
		return r.deleteRoute(ctx, s)
	}
	if s.service == nil {
		// The route sends to the Service: it waits for it (ServiceMissing).
		return nil
	}
	obj, err := s.children.Ensure(ctx, desiredRoute(s.app, s.service), &gatewayv1.HTTPRoute{})
	if meta.IsNoMatchError(err) {
		s.routeAPIMissing = true
		return nil
	}
	if err != nil {
		return err
	}
	s.route, _ = obj.(*gatewayv1.HTTPRoute)
	if s.route != nil && r.routes != nil {
		// Its parents' status changes come through this watch.
		return r.routes.Start()
	}
	return nil
}

// deleteRoute deletes the HTTPRoute the Application made once spec.route
// is removed. It looks only when there may be one: the Application's
// status still mirrors a route, or this process has made some; an
// Application that never had a route costs no lookup, not even of whether
// the cluster serves the Gateway API. A route whose deletion was refused
// stays in s (its RouteAccepted with it), so the next reconcile tries
// again.
func (r *ApplicationReconciler) deleteRoute(ctx context.Context, s *applicationScope) error {
	hadRoute := meta.FindStatusCondition(s.app.Status.Conditions, sunappsv1.ConditionRouteAccepted) != nil
	if !hadRoute && (r.routes == nil || !r.routes.Started()) {
		return nil
	}
	obj, err := ensureOrDelete(ctx, s, nil, &gatewayv1.HTTPRoute{}, "spec.route was removed")
	if meta.IsNoMatchError(err) {
		return nil
	}
	s.route, _ = obj.(*gatewayv1.HTTPRoute)
	return err
}

// desiredRoute is the HTTPRoute app asks for, to svc, its Service.
func desiredRoute(app *sunappsv1.Application, svc *corev1.Service) *gatewayv1.HTTPRoute {
	rt := app.Spec.Route.DeepCopy()
	port := rt.Port
	if port == 0 && len(svc.Spec.Ports) > 0 {
		port = svc.Spec.Ports[0].Port
	}
	path := routePath(rt)
	return &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: childMeta(app),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: rt.ParentRefs},
			Hostnames:       rt.Hostnames,
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
					Type: new(gatewayv1.PathMatchPathPrefix), Value: &path}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{
						Name: gatewayv1.ObjectName(svc.Name), Port: new(port)}}}},
			}},
		},
	}
}

// routePath is the route's path prefix, "/" by default.
func routePath(rt *sunappsv1.Route) string {
	if rt.Path == "" {
		return "/"
	}
	return rt.Path
}

// servedPath is the path prefix the route, as made by desiredRoute,
// matches: "/" when it matches none.
func servedPath(route *gatewayv1.HTTPRoute) string {
	if len(route.Spec.Rules) > 0 && len(route.Spec.Rules[0].Matches) > 0 {
		if p := route.Spec.Rules[0].Matches[0].Path; p != nil && p.Value != nil {
			return *p.Value
		}
	}
	return "/"
}

// routeAccepted is what the route's parents say of it: every parent must
// have Accepted and ResolvedRefs True. ok is false while none has said
// anything yet (no Gateway controller has seen it); rejected is true when
// a parent refuses it, with its reason and message.
func routeAccepted(route *gatewayv1.HTTPRoute) (c metav1.Condition, ok bool) {
	c = metav1.Condition{Type: sunappsv1.ConditionRouteAccepted, Status: metav1.ConditionUnknown,
		Reason: sunappsv1.ReasonRoutePending, Message: "No Gateway has accepted the route yet"}
	if route == nil || len(route.Status.Parents) == 0 {
		return c, false
	}
	for _, p := range route.Status.Parents {
		for _, t := range []string{string(gatewayv1.RouteConditionAccepted), string(gatewayv1.RouteConditionResolvedRefs)} {
			pc := meta.FindStatusCondition(p.Conditions, t)
			if pc == nil || pc.Status == metav1.ConditionUnknown || pc.ObservedGeneration < route.Generation {
				// Not said yet of this generation of the route.
				return c, false
			}
			if pc.Status == metav1.ConditionFalse {
				c.Status, c.Reason = metav1.ConditionFalse, sunappsv1.ReasonRouteNotAccepted
				c.Message = fmt.Sprintf("Gateway %s: %s %s: %s", parentName(p.ParentRef), t, pc.Reason, pc.Message)
				return c, true
			}
		}
	}
	c.Status, c.Reason, c.Message = metav1.ConditionTrue, sunappsv1.ReasonRouteAccepted, "Every parent accepted the route"
	return c, true
}

func parentName(ref gatewayv1.ParentReference) string {
	if ref.Namespace != nil {
		return string(*ref.Namespace) + "/" + string(ref.Name)
	}
	return string(ref.Name)
}

// applicationURL is the URL a person would open: the accepted route's
// first hostname and path, read from the route itself (while its write is
// refused, the route the Gateway serves holds the spec before the change);
// else the Service's in-cluster URL.
func applicationURL(app *sunappsv1.Application, obs *observation) string {
	if route := obs.route; app.Spec.Route != nil && route != nil && len(route.Spec.Hostnames) > 0 {
		if c, ok := routeAccepted(route); ok && c.Status == metav1.ConditionTrue {
			host := strings.TrimPrefix(string(route.Spec.Hostnames[0]), "*.")
			return "http://" + host + servedPath(route)
		}
	}
	if obs.service == nil || len(obs.service.Spec.Ports) == 0 {
		return ""
	}
	url := fmt.Sprintf("http://%s.%s.svc", obs.service.Name, obs.service.Namespace)
	if port := obs.service.Spec.Ports[0].Port; port != 80 {
		url += fmt.Sprintf(":%d", port)
	}
	return url
}
