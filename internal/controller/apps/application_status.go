package apps

import (
	"fmt"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	policyv1 "k8s.io/api/policy/v1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	controllers "sunstrider.cn/operator/internal/controller"
)

// observation is what one reconcile saw of an Application's children. Status
// is computed from it alone.
type observation struct {
	// children recorded the reconcile's reads and writes of the children:
	// a conflict or a refusal sets Ready's reason (NotReady). nil reads as
	// neither.
	children *controllers.Children
	// deployment is the live Deployment controlled by the Application, or nil.
	deployment *appsv1.Deployment
	// service is the live Service controlled by the Application, or nil.
	service *corev1.Service
	// serviceWanted is true when the Application asks for a Service.
	serviceWanted bool
	// disruptionBudget is the live PodDisruptionBudget controlled by the
	// Application, or nil; disruptionBudgetWanted is true when the
	// Application asks for one.
	disruptionBudget       *policyv1.PodDisruptionBudget
	disruptionBudgetWanted bool
	// autoscaler is the live HorizontalPodAutoscaler controlled by the
	// Application, or nil; autoscalerWanted is true when the Application
	// asks for one.
	autoscaler       *autoscalingv2.HorizontalPodAutoscaler
	autoscalerWanted bool
	// route is the live HTTPRoute controlled by the Application, or nil;
	// routeWanted is true when the Application asks for one, and
	// routeAPIMissing when the cluster has no Gateway API.
	route           *gatewayv1.HTTPRoute
	routeWanted     bool
	routeAPIMissing bool
	// previousTemplate, when set, is the Pod template the Deployment ran
	// until this reconcile changed it, since previousSince, its rollout's
	// outcome previousOutcome (empty when unknown); revisions are the
	// Application's ControllerRevisions, newest first (reconcileRevisions).
	previousTemplate *corev1.PodTemplateSpec
	previousSince    time.Time
	previousOutcome  sunappsv1.RevisionOutcome
	revisions        []*appsv1.ControllerRevision
	// selector is the Deployment's Pod selector.
	selector *metav1.LabelSelector
	// unvouched, when set, names a ready Pod of the Deployment that runs on
	// a node that is not Ready (observeNodes).
	unvouched string
	// podFailure, when set, says why the degraded Deployment's Pods fail
	// (observeFailingPod), for Ready's and Degraded's messages.
	podFailure string
	// selectorImmutable, when set, says why the Deployment was not written:
	// spec.deployment.selector differs from the existing Deployment's
	// (SelectorImmutable, Application-only).
	selectorImmutable string
	// tooLarge, when set, says which part of the spec is beyond its bound
	// (sunappsv1.ValidateSizes): nothing was copied into a child
	// (SpecTooLarge, checkBounds).
	tooLarge string
}

// computeStatus returns app's status from what was observed: a new value,
// app is left as it is. Conditions keep their lastTransitionTime from app's
// while their status holds.
func computeStatus(app *sunappsv1.Application, obs *observation) sunappsv1.ApplicationStatus {
	status := sunappsv1.ApplicationStatus{ObservedGeneration: app.Generation}
	if obs.deployment != nil {
		status.Workflow = sunappsv1.NewWorkflowStatus(&obs.deployment.Status)
	}
	if obs.service != nil {
		status.Network = *obs.service.Status.DeepCopy()
		status.ClusterIP = obs.service.Spec.ClusterIP
	}
	if obs.selector != nil {
		status.Selector = metav1.FormatLabelSelector(obs.selector)
	}
	status.CurrentRevision, status.Revisions = revisionStatus(obs.revisions, obs)
	status.URL = applicationURL(app, obs)

	own := []metav1.Condition{availableCondition(app, obs), progressingCondition(app, obs)}
	if degraded := degradedCondition(app, obs); degraded.Status != metav1.ConditionFalse {
		// An abnormal-true condition exists only while it is true.
		own = append(own, degraded)
	}
	if obs.routeWanted || obs.route != nil {
		accepted, _ := routeAccepted(obs.route)
		own = append(own, accepted)
	}
	own = append(own, readyCondition(app, obs))
	status.Conditions = controllers.MergeConditions(app.Status.Conditions, readyReasonClasses, app.Generation, own...)
	return status
}

// ReadyReasons are the reasons of an Application's Ready, with which the
// operator (or the Deployment controller) works on and which wait for a
// person; make docs renders them in docs/conditions.md.
var ReadyReasons = controllers.Reasons{
	{Reason: sunappsv1.ReasonReady, Status: metav1.ConditionTrue,
		Meaning: "Deployment and Service in place, controlled by the Application, and the Deployment `Current` by kstatus: " +
			"its latest generation observed, every Pod updated, ready and available, no old Pod left, its rollout " +
			"reported complete (`Progressing` with `NewReplicaSetAvailable`)"},
	{Reason: sunappsv1.ReasonDeploymentMissing, Class: controllers.Working, Meaning: "The Deployment does not exist yet"},
	{Reason: sunappsv1.ReasonServiceMissing, Class: controllers.Working,
		Meaning: "The Service the Application asks for does not exist yet"},
	{Reason: sunappsv1.ReasonDisruptionBudgetMissing, Class: controllers.Working,
		Meaning: "The PodDisruptionBudget `spec.disruptionBudget` asks for does not exist yet"},
	{Reason: sunappsv1.ReasonAutoscalerMissing, Class: controllers.Working,
		Meaning: "The HorizontalPodAutoscaler `spec.autoscaling` asks for does not exist yet"},
	{Reason: sunappsv1.ReasonRouteMissing, Class: controllers.Working,
		Meaning: "The HTTPRoute `spec.route` asks for does not exist yet"},
	{Reason: sunappsv1.ReasonRoutePending, Class: controllers.Working,
		Meaning: "No Gateway of `spec.route.parentRefs` has said yet whether it accepts the route " +
			"(`RouteAccepted=Unknown`): no Gateway controller serves them yet, or it has not seen the route"},
	{Reason: sunappsv1.ReasonRouteAPIMissing, Class: controllers.Blocked,
		Meaning: "`spec.route` needs the Gateway API, which the cluster does not serve; the rest of the " +
			"Application is reconciled, and the route is made within the conflict recheck interval of the " +
			"API's CRDs being installed, without a restart"},
	{Reason: sunappsv1.ReasonRouteNotAccepted, Class: controllers.Blocked,
		Meaning: "A Gateway refused the route, or could not resolve its backend (`RouteAccepted=False`); the " +
			"message names the Gateway and says why, in its words"},
	{Reason: sunappsv1.ReasonRollingOut, Class: controllers.Working,
		Meaning: "The Deployment has not rolled out the current spec: a Pod not updated yet, or an old Pod still running " +
			"(in the middle of a rollout the old Pod still counts as available; the message gives kstatus' reason, " +
			"e.g. `Pending termination: 1`)"},
	{Reason: sunappsv1.ReasonDeploymentUnavailable, Class: controllers.Working,
		Meaning: "Every Pod updated, fewer ready or available than replicas"},
	{Reason: sunappsv1.ReasonNodeNotReady, Class: controllers.Working,
		Meaning: "The Deployment has rolled out, but a Pod it counts as ready runs on a node that is not `Ready` " +
			"(e.g. its kubelet lost the container runtime: Kubernetes keeps such a Pod `Ready` until the kubelet stops " +
			"reporting); the message names the Pod, the node and why. Looked at again when a node's readiness changes"},
	{Reason: sunappsv1.ReasonResourceConflict, Class: controllers.Blocked,
		Meaning: "A Deployment or Service of that name belongs to someone else; left untouched (Warning event), and " +
			"no Service is made for a Deployment someone else runs"},
	{Reason: sunappsv1.ReasonSelectorImmutable, Class: controllers.Blocked,
		Meaning: "`spec.deployment.selector` differs from the existing Deployment's"},
	{Reason: sunappsv1.ReasonSpecTooLarge, Class: controllers.Blocked,
		Meaning: "A part of the spec the operator copies into a child is larger, as JSON, than its bound " +
			"(`spec.deployment` 128 KiB, `spec.service` 64 KiB, `spec.autoscaling` and `spec.route` 16 KiB), which the " +
			"admission webhook refuses; stored while no webhook ran, it is not copied: no child is written until the " +
			"spec is smaller (Warning event). The message names the field"},
	{Reason: sunappsv1.ReasonApplyFailed, Class: controllers.Blocked,
		Meaning: "The API server refused the Deployment or Service, or the Service's deletion once `spec.service` has " +
			"no ports: as invalid (e.g. a `nodePort` outside the cluster's `--service-node-port-range`; waits for a new " +
			"spec) or otherwise (RBAC, an admission policy, a quota; retried with backoff). The running Deployment is " +
			"kept and reported; the message is the API server's"},
	{Reason: sunappsv1.ReasonDeploymentDegraded, Class: controllers.Blocked,
		Meaning: "The Deployment exceeded its progress deadline (`ProgressDeadlineExceeded`) or cannot create Pods " +
			"(`ReplicaFailure`, e.g. a quota); the message adds the first failing container and how it last ended, e.g. " +
			"`Pod web-7d9-x2x container \"app\": CrashLoopBackOff, last terminated with exit code 1 (Error)` (a crash " +
			"loop ends here once `progressDeadlineSeconds` passes)"},
}

// readyReasonClasses says which reasons of Ready=False the operator (or the
// Deployment controller) works on, and which wait for a person: the shared
// ones of the children's answers (ResourceConflict, ApplyFailed) and the
// Application's own.
var readyReasonClasses = controllers.WithChildReasons(ReadyReasons.Classes())

// availableCondition mirrors the Deployment's Available condition.
func availableCondition(_ *sunappsv1.Application, obs *observation) metav1.Condition {
	return mirrorDeploymentCondition(obs.deployment, sunappsv1.ConditionAvailable, appsv1.DeploymentAvailable)
}

// progressingCondition mirrors the Deployment's Progressing condition.
func progressingCondition(_ *sunappsv1.Application, obs *observation) metav1.Condition {
	return mirrorDeploymentCondition(obs.deployment, sunappsv1.ConditionProgressing, appsv1.DeploymentProgressing)
}

func mirrorDeploymentCondition(d *appsv1.Deployment, condType string, from appsv1.DeploymentConditionType) metav1.Condition {
	if d == nil {
		return metav1.Condition{Type: condType, Status: metav1.ConditionFalse,
			Reason: sunappsv1.ReasonDeploymentMissing, Message: "The Deployment does not exist"}
	}
	c := deploymentCondition(d, from)
	if c == nil {
		return metav1.Condition{Type: condType, Status: metav1.ConditionUnknown,
			Reason: sunappsv1.ReasonStatusUnknown, Message: fmt.Sprintf("The Deployment reports no %s condition yet", from)}
	}
	reason := c.Reason
	if reason == "" {
		reason = sunappsv1.ReasonStatusUnknown
	}
	return metav1.Condition{Type: condType, Status: metav1.ConditionStatus(c.Status), Reason: reason, Message: c.Message}
}

// degradedCondition is True when the Deployment cannot make progress or
// cannot create its Pods.
func degradedCondition(_ *sunappsv1.Application, obs *observation) metav1.Condition {
	if msg, degraded := degradedMessage(obs); degraded {
		return metav1.Condition{Type: sunappsv1.ConditionDegraded, Status: metav1.ConditionTrue,
			Reason: sunappsv1.ReasonDeploymentDegraded, Message: msg}
	}
	return metav1.Condition{Type: sunappsv1.ConditionDegraded, Status: metav1.ConditionFalse,
		Reason: sunappsv1.ReasonAsExpected, Message: "The Deployment reports no failure"}
}

// degradedMessage is deploymentDegraded's message with, when known, why
// the Pods fail (a crash loop and its exit code).
func degradedMessage(obs *observation) (string, bool) {
	msg, degraded := deploymentDegraded(obs.deployment)
	if degraded && obs.podFailure != "" {
		msg += " " + obs.podFailure
	}
	return msg, degraded
}

func deploymentDegraded(d *appsv1.Deployment) (string, bool) {
	if d == nil {
		return "", false
	}
	if c := deploymentCondition(d, appsv1.DeploymentProgressing); c != nil &&
		c.Status == corev1.ConditionFalse && c.Reason == sunappsv1.ReasonProgressDeadlineExceeded {
		return "ProgressDeadlineExceeded: " + c.Message, true
	}
	if c := deploymentCondition(d, appsv1.DeploymentReplicaFailure); c != nil && c.Status == corev1.ConditionTrue {
		return "ReplicaFailure: " + c.Message, true
	}
	return "", false
}

// readyCondition summarises the Application: True only when every child is
// in place, controlled by it, rolled out and available. A conflict or a
// refusal (the shared policy, Children.NotReady) comes first, then the
// Application's own SelectorImmutable.
func readyCondition(_ *sunappsv1.Application, obs *observation) metav1.Condition {
	notReady := func(reason, msg string) metav1.Condition {
		return metav1.Condition{Type: sunappsv1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	}
	if obs.children != nil {
		if reason, msg, ok := obs.children.NotReady(); ok {
			return notReady(reason, msg)
		}
	}
	switch {
	case obs.tooLarge != "":
		return notReady(sunappsv1.ReasonSpecTooLarge, obs.tooLarge)
	case obs.selectorImmutable != "":
		return notReady(sunappsv1.ReasonSelectorImmutable, obs.selectorImmutable)
	case obs.deployment == nil:
		return notReady(sunappsv1.ReasonDeploymentMissing, "The Deployment does not exist")
	case obs.serviceWanted && obs.service == nil:
		return notReady(sunappsv1.ReasonServiceMissing, "The Service does not exist yet")
	case obs.disruptionBudgetWanted && obs.disruptionBudget == nil:
		return notReady(sunappsv1.ReasonDisruptionBudgetMissing, "The PodDisruptionBudget does not exist yet")
	case obs.autoscalerWanted && obs.autoscaler == nil:
		return notReady(sunappsv1.ReasonAutoscalerMissing, "The HorizontalPodAutoscaler does not exist yet")
	case obs.routeAPIMissing:
		return notReady(sunappsv1.ReasonRouteAPIMissing, "spec.route needs the Gateway API (HTTPRoute, "+
			"gateway.networking.k8s.io/v1), which this cluster does not serve: install its CRDs")
	case obs.routeWanted && obs.route == nil:
		return notReady(sunappsv1.ReasonRouteMissing, "The HTTPRoute does not exist yet")
	}
	if obs.routeWanted {
		if c, ok := routeAccepted(obs.route); !ok || c.Status != metav1.ConditionTrue {
			return notReady(c.Reason, c.Message)
		}
	}
	d := obs.deployment
	if msg, degraded := degradedMessage(obs); degraded {
		return notReady(sunappsv1.ReasonDeploymentDegraded, msg)
	}
	replicas := ptr.Deref(d.Spec.Replicas, 1)
	rollout := deploymentRollout(d)
	switch {
	case rollout.Status == kstatus.CurrentStatus && obs.unvouched != "":
		return notReady(sunappsv1.ReasonNodeNotReady, obs.unvouched)
	case rollout.Status == kstatus.CurrentStatus:
		return metav1.Condition{Type: sunappsv1.ConditionReady, Status: metav1.ConditionTrue, Reason: sunappsv1.ReasonReady,
			Message: fmt.Sprintf("%d of %d Pods available", d.Status.AvailableReplicas, replicas)}
	case rolloutWaitsOnPods(rollout):
		return notReady(sunappsv1.ReasonDeploymentUnavailable, fmt.Sprintf(
			"%d of %d Pods available, %d ready", d.Status.AvailableReplicas, replicas, d.Status.ReadyReplicas))
	}
	return notReady(sunappsv1.ReasonRollingOut, fmt.Sprintf("The Deployment is rolling out: %d of %d Pods updated (%s)",
		d.Status.UpdatedReplicas, replicas, rollout.Message))
}

// deploymentRollout is the Deployment's kstatus, what Flux's and Argo CD's
// health checks and `kubectl rollout status` agree on: Current once its
// controller has seen the latest generation and every Pod is updated,
// ready and available, with no old Pod left. An Application is Ready no
// sooner: in the middle of a rollout the old Pod still counts as
// available, and updatedReplicas counts the new Pod before it is ready.
func deploymentRollout(d *appsv1.Deployment) *kstatus.Result {
	obj, err := rolloutView(d)
	if err != nil {
		return &kstatus.Result{Status: kstatus.UnknownStatus, Message: err.Error()}
	}
	res, err := kstatus.Compute(obj)
	if err != nil {
		return &kstatus.Result{Status: kstatus.UnknownStatus, Message: err.Error()}
	}
	return res
}

// rolloutView is d as kstatus reads it: only the fields its rules for a
// Deployment read (metadata.generation and deletionTimestamp, spec.replicas
// and progressDeadlineSeconds, the status), with the kind that selects
// those rules (objects from the cache carry none). Converting the whole
// Deployment walked the Pod template and the metadata by reflection, most
// of what deciding a rollout cost, at every reconcile and twice per
// Deployment update event (docs/performance.md, the manager's profile).
// TestRolloutViewAgreesWithTheWholeDeployment holds kstatus's answer for
// the view equal to its answer for the whole Deployment.
func rolloutView(d *appsv1.Deployment) (*unstructured.Unstructured, error) {
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&d.Status)
	if err != nil {
		return nil, err
	}
	// As the converter writes them: a zero generation is left out (omitempty).
	metadata := map[string]any{}
	if d.Generation != 0 {
		metadata["generation"] = d.Generation
	}
	if d.DeletionTimestamp != nil {
		metadata["deletionTimestamp"] = d.DeletionTimestamp.UTC().Format(time.RFC3339)
	}
	spec := map[string]any{}
	if d.Spec.Replicas != nil {
		spec["replicas"] = int64(*d.Spec.Replicas)
	}
	if d.Spec.ProgressDeadlineSeconds != nil {
		spec["progressDeadlineSeconds"] = int64(*d.Spec.ProgressDeadlineSeconds)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": metadata, "spec": spec, "status": status}}
	obj.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	return obj, nil
}

// rolloutWaitsOnPods tells whether a Deployment that is not Current has
// every Pod updated and waits only for them to become ready or available.
func rolloutWaitsOnPods(res *kstatus.Result) bool {
	for _, c := range res.Conditions {
		switch c.Reason {
		case "LessReady", "LessAvailable", "DeploymentNotAvailable":
			return true
		}
	}
	return false
}

// deploymentReady tells whether d, rolled out and available, makes its
// Application Ready as far as the Deployment goes (readyCondition, the
// other children aside): the change that makes it true is queued first
// (machinery.ReadyPriority).
func deploymentReady(d *appsv1.Deployment) bool {
	return readyCondition(nil, &observation{deployment: d}).Status == metav1.ConditionTrue
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// changedStatusParts names the parts of the status that differ between old
// and new, for the log line of a status write.
func changedStatusParts(old, new *sunappsv1.ApplicationStatus) []string {
	var parts []string
	for _, p := range []struct {
		name     string
		old, new any
	}{
		{"observedGeneration", old.ObservedGeneration, new.ObservedGeneration},
		{"workflow", old.Workflow, new.Workflow},
		{"network", old.Network, new.Network},
		{"clusterIP", old.ClusterIP, new.ClusterIP},
		{"selector", old.Selector, new.Selector},
	} {
		if !equality.Semantic.DeepEqual(p.old, p.new) {
			parts = append(parts, p.name)
		}
	}
	for _, c := range new.Conditions {
		if o := meta.FindStatusCondition(old.Conditions, c.Type); o == nil || !equality.Semantic.DeepEqual(*o, c) {
			parts = append(parts, "conditions."+c.Type)
		}
	}
	return parts
}
