package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sunstrider.cn/operator/api/meta"
)

// Condition types of an Application.
const (
	// ConditionReady is True when the Deployment (and the Service, if any)
	// exist, are controlled by the Application, hold its current spec, and the
	// Deployment is available and not degraded.
	ConditionReady = meta.ConditionReady
	// ConditionAvailable mirrors the Deployment's Available condition.
	ConditionAvailable = "Available"
	// ConditionProgressing mirrors the Deployment's Progressing condition.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the Deployment cannot make progress
	// (ProgressDeadlineExceeded) or cannot create Pods (ReplicaFailure).
	ConditionDegraded = "Degraded"
	// ConditionRouteAccepted mirrors what the HTTPRoute's parents (the
	// Gateways of spec.route) say of it: True when every one accepted it and
	// resolved its backend, False with the first refusal; only while
	// spec.route is set.
	ConditionRouteAccepted = "RouteAccepted"
	// ConditionReconciling is True, with Ready's reason and message, while
	// Ready is not True for a reason the operator or the Deployment
	// controller works on (RollingOut, DeploymentUnavailable,
	// DeploymentMissing, ServiceMissing). It exists only while True: kstatus
	// (Flux, kpt, Config Sync) reports the Application InProgress.
	ConditionReconciling = meta.ConditionReconciling
	// ConditionStalled is True, with Ready's reason and message, while Ready
	// is not True for a reason that lasts until a person acts
	// (ResourceConflict, ApplyFailed, SelectorImmutable, DeploymentDegraded).
	// It exists only while True: kstatus reports the Application Failed, so
	// a GitOps apply fails at once instead of timing out.
	ConditionStalled = meta.ConditionStalled
)

// Reasons of an Application's conditions. The reasons of Ready=False also
// say whether the Application is Reconciling (the operator works on it) or
// Stalled (a person must act); docs/conditions.md has the whole table.
const (
	// ReasonReady: everything is in place and available (Ready=True).
	ReasonReady = "Ready"
	// ReasonResourceConflict: a Deployment or Service of the Application's
	// name exists and is not controlled by it; the operator leaves it alone
	// (Ready=False, Stalled).
	ReasonResourceConflict = meta.ReasonResourceConflict
	// ReasonApplyFailed: the API server refused the desired child object as
	// invalid, for example a Service nodePort outside the cluster's
	// --service-node-port-range; the message carries the API server's
	// answer. The spec must change (Ready=False, Stalled).
	ReasonApplyFailed = meta.ReasonApplyFailed
	// ReasonSelectorImmutable: spec.deployment.selector differs from the
	// existing Deployment's selector, which cannot change (Ready=False,
	// Stalled).
	ReasonSelectorImmutable = "SelectorImmutable"
	// ReasonSpecTooLarge: a part of the spec the operator copies into a
	// child (spec.deployment, spec.service, spec.autoscaling, spec.route)
	// is beyond its bound (ValidateSizes), which the admission webhook
	// refuses; stored without it (webhooks off or not registered), the
	// operator copies nothing until the spec is smaller. The message names
	// the field (Ready=False, Stalled).
	ReasonSpecTooLarge = "SpecTooLarge"
	// ReasonRollingOut: the Deployment has not yet rolled out the current
	// spec (Ready=False, Reconciling).
	ReasonRollingOut = "RollingOut"
	// ReasonDeploymentUnavailable: the Deployment has fewer available Pods
	// than it needs (Ready=False, Reconciling).
	ReasonDeploymentUnavailable = "DeploymentUnavailable"
	// ReasonDeploymentDegraded: the Deployment exceeded its progress
	// deadline (ProgressDeadlineExceeded) or cannot create Pods
	// (ReplicaFailure, such as an exceeded quota); the message says which
	// (Ready=False, Stalled).
	ReasonDeploymentDegraded = "DeploymentDegraded"
	// ReasonNodeNotReady: the Deployment has rolled out, but a Pod it counts
	// as ready runs on a node that is not Ready (its kubelet cannot reach
	// the container runtime, say): Kubernetes keeps such a Pod Ready, the
	// node cannot vouch for it (Ready=False, Reconciling).
	ReasonNodeNotReady = "NodeNotReady"
	// ReasonDeploymentMissing: the Deployment does not exist yet
	// (Ready=False, Reconciling).
	ReasonDeploymentMissing = "DeploymentMissing"
	// ReasonServiceMissing: the Application asks for a Service that does
	// not exist yet (Ready=False, Reconciling).
	ReasonServiceMissing = "ServiceMissing"
	// ReasonDisruptionBudgetMissing: the Application asks for a
	// PodDisruptionBudget (spec.disruptionBudget) that does not exist yet
	// (Ready=False, Reconciling).
	ReasonDisruptionBudgetMissing = "DisruptionBudgetMissing"
	// ReasonAutoscalerMissing: the Application asks for a
	// HorizontalPodAutoscaler (spec.autoscaling) that does not exist yet
	// (Ready=False, Reconciling).
	ReasonAutoscalerMissing = "AutoscalerMissing"
	// ReasonRouteAPIMissing: the Application asks for a route
	// (spec.route) and the cluster has no Gateway API (the HTTPRoute kind
	// of gateway.networking.k8s.io/v1); the rest of the Application is
	// reconciled, and the route is made once the API is installed
	// (Ready=False, Stalled).
	ReasonRouteAPIMissing = "RouteAPIMissing"
	// ReasonRouteMissing: the HTTPRoute does not exist yet (Ready=False,
	// Reconciling).
	ReasonRouteMissing = "RouteMissing"
	// ReasonRoutePending: no Gateway has said yet whether it accepts the
	// route (RouteAccepted=Unknown; Ready=False, Reconciling).
	ReasonRoutePending = "RoutePending"
	// ReasonRouteNotAccepted: a Gateway refused the route or could not
	// resolve its backend; the message is the Gateway's (RouteAccepted and
	// Ready False, Stalled).
	ReasonRouteNotAccepted = "RouteNotAccepted"
	// ReasonRouteAccepted: every Gateway of the route accepted it
	// (RouteAccepted=True).
	ReasonRouteAccepted = "RouteAccepted"
	// ReasonAsExpected: used by Degraded=False when nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonStatusUnknown: the Deployment has not reported this condition yet.
	ReasonStatusUnknown = "StatusUnknown"
	// ReasonProgressDeadlineExceeded mirrors the Deployment's reason.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)

// GetConditions returns the Application's status conditions (meta.ObjectWithConditions).
func (in *Application) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the Application's status conditions.
func (in *Application) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
