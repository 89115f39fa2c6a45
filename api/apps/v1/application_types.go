/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ApplicationSpec defines the desired state of an Application: one
// Deployment and, when it has ports, one Service, both named after the
// Application.
// +kubebuilder:validation:XValidation:rule="!has(self.route) || (has(self.service.ports) && size(self.service.ports) > 0)",message="a route needs a Service port to send to: spec.service.ports is empty",fieldPath=".route"
type ApplicationSpec struct {
	// deployment is the spec of the Deployment the operator keeps in sync.
	// It has the shape of a Deployment's spec; selector and template labels
	// may be left out, in which case the operator derives a stable selector
	// from the Application's name.
	// +optional
	Deployment DeploymentTemplate `json:"deployment,omitempty"`

	// service is the spec of the Service exposing the Deployment. No ports,
	// no Service. When its selector is empty it selects the Deployment's Pods.
	// +optional
	Service ServiceTemplate `json:"service,omitempty"`

	// disruptionBudget, when set, is kept as a PodDisruptionBudget named
	// after the Application, on the Deployment's Pods: a node drain or a
	// cluster autoscaler evicts them only as it allows. Removing it deletes
	// the budget.
	// +optional
	DisruptionBudget *DisruptionBudget `json:"disruptionBudget,omitempty"`

	// autoscaling, when set, is kept as a HorizontalPodAutoscaler named
	// after the Application whose target is the Application itself (its
	// scale subresource): the autoscaler sets spec.deployment.replicas and
	// the operator applies it to the Deployment, so the two never write the
	// same field against each other. Removing it deletes the autoscaler.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`

	// route, when set, exposes the Application through the Gateway API: an
	// HTTPRoute named after it, attached to parentRefs, for hostnames and
	// path, sending to its Service. Removing it deletes the route.
	// +optional
	Route *Route `json:"route,omitempty"`
}

// Route is an Application's HTTPRoute (gateway.networking.k8s.io/v1).
type Route struct {
	// parentRefs are the Gateways (or listeners of them) the route attaches
	// to, as in an HTTPRoute.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	ParentRefs []gatewayv1.ParentReference `json:"parentRefs"`
	// hostnames are the host names the route answers for (DNS names, a
	// leading "*." allowed); every host the Gateway accepts when empty.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Hostnames []gatewayv1.Hostname `json:"hostnames,omitempty"`
	// path is the path prefix the route matches; "/" when unset.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path,omitempty"`
	// port is the port of the Application's Service the route sends to;
	// its first port when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// Autoscaling is a HorizontalPodAutoscaler's spec without its target, as
// in autoscaling/v2: the Application is the target.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not be above maxReplicas",fieldPath=".minReplicas"
type Autoscaling struct {
	// minReplicas is the fewest replicas the autoscaler scales down to; 1
	// when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// maxReplicas is the most replicas the autoscaler scales up to.
	// +required
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`
	// metrics are what the autoscaler computes the replica count from, as
	// in autoscaling/v2; the autoscaler's default (80% average CPU
	// utilization) when empty. The containers need CPU requests for a
	// utilization.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`
	// behavior is how fast the autoscaler scales up and down, as in
	// autoscaling/v2.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// DisruptionBudget is how many of the Application's Pods an eviction may
// leave: exactly one of minAvailable and maxUnavailable, each a number of
// Pods or a percentage of the replicas ("50%").
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="exactly one of minAvailable and maxUnavailable must be set"
type DisruptionBudget struct {
	// minAvailable is how many Pods must stay available during an
	// eviction: a number, or a percentage of the replicas.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be a number of Pods (0 or more) or a percentage from 0% to 100%"
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// maxUnavailable is how many Pods may be unavailable after an
	// eviction: a number, or a percentage of the replicas.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be a number of Pods (0 or more) or a percentage from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// DeploymentTemplate has the JSON shape of appsv1.DeploymentSpec. It is
// spelled out (rather than embedding appsv1.DeploymentSpec) so that selector
// can be optional: an Application without labels or selector is valid.
// A selector, once set, cannot be changed (a Deployment's selector is
// immutable); the API server enforces it even while the operator's
// admission webhook is down.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.selector) || ((!has(oldSelf.selector.matchLabels) || size(oldSelf.selector.matchLabels) == 0) && (!has(oldSelf.selector.matchExpressions) || size(oldSelf.selector.matchExpressions) == 0)) || (has(self.selector) && self.selector == oldSelf.selector)",message="selector is immutable once set",fieldPath=".selector"
type DeploymentTemplate struct {
	// replicas is the number of desired Pods. Defaults to 1; the scale
	// subresource reads and writes it.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// selector is the label selector of the Deployment's Pods. When omitted,
	// the operator uses `apps.sunstrider.cn/application: <name>`. A selector
	// never changes once the Deployment exists.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// template describes the Pods. Its labels always receive the selector's
	// matchLabels.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitzero"`

	// strategy is the Deployment's strategy for replacing Pods.
	// +optional
	Strategy appsv1.DeploymentStrategy `json:"strategy,omitzero"`

	// minReadySeconds is the minimum time a new Pod must be ready to count
	// as available.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// revisionHistoryLimit is the number of old ReplicaSets kept for rollback.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// paused stops the Deployment's rollouts.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// progressDeadlineSeconds is how long a rollout may make no progress
	// before the Deployment reports ProgressDeadlineExceeded (Degraded here).
	// +optional
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// ServiceTemplate is a Service's spec, inline: the fields of a Service's
// spec, with these rules, which the API server enforces even while the
// operator's admission webhook is down: every port is between 1 and 65535,
// every port has a name when there is more than one, and nodePort is set
// only when type is NodePort or LoadBalancer.
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, p.port >= 1 && p.port <= 65535)",message="every port must be between 1 and 65535",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || size(self.ports) <= 1 || self.ports.all(p, has(p.name) && size(p.name) > 0)",message="every port needs a name when there is more than one",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || !self.ports.exists(p, has(p.nodePort) && p.nodePort != 0) || (has(self.type) && (self.type == 'NodePort' || self.type == 'LoadBalancer'))",message="nodePort may only be set when type is NodePort or LoadBalancer",fieldPath=".ports"
type ServiceTemplate struct {
	corev1.ServiceSpec `json:",inline"`
}

// ApplicationStatus is the observed state of an Application. It is computed
// from the children on every reconcile, never from its previous value.
type ApplicationStatus struct {
	// workflow mirrors the Deployment's status, except its count of
	// terminating Pods (see WorkflowStatus).
	// +optional
	Workflow WorkflowStatus `json:"workflow,omitzero"`

	// network mirrors the Service's status.
	// +optional
	Network corev1.ServiceStatus `json:"network,omitzero"`

	// url is the URL a person would open: from the accepted route's first
	// hostname and path; without a route, the Service's in-cluster URL
	// (http://NAME.NAMESPACE.svc:PORT); empty without either.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url,omitempty"`

	// clusterIP is the cluster IP the API server assigned to the Service.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ClusterIP string `json:"clusterIP,omitempty"`

	// selector is the Deployment's label selector in string form, for the
	// scale subresource (and so for HorizontalPodAutoscalers).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// currentRevision is the revision of the Pod template the Deployment
	// runs, once the Application's template has changed at least once (the
	// operator keeps revisions from the first change on; 0 before).
	// +optional
	CurrentRevision int64 `json:"currentRevision,omitempty"`

	// revisions are the Pod templates the operator rolled out, newest
	// first, each kept as a ControllerRevision owned by the Application
	// (spec.deployment.revisionHistoryLimit old ones, 10 by default), with
	// their images, when each became current and how its rollout ended.
	// `kubectl sunstrider rollback NAME --to-revision N` writes one back.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Revisions []RevisionStatus `json:"revisions,omitempty"`

	// conditions describe the Application: Ready, Available, Progressing and
	// Degraded, and, while Ready is not True, either Reconciling (the
	// operator works on it) or Stalled (a person must act), with Ready's
	// reason, as kstatus and Flux read them. Their reasons are the Reason*
	// constants of this package (docs/conditions.md).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RevisionStatus is one revision of an Application's Pod template.
type RevisionStatus struct {
	// revision is the revision's number: the highest is the current one.
	// +required
	Revision int64 `json:"revision"`
	// images are the images of the template's containers, in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=1024
	Images []string `json:"images,omitempty"`
	// since is when the revision became the current one.
	// +optional
	Since metav1.Time `json:"since,omitzero"`
	// outcome is how its rollout went: RollingOut while it is the current
	// one and not rolled out yet, RolledOut once every Pod ran it, Failed
	// when the rollout stalled (DeploymentDegraded).
	// +optional
	// +kubebuilder:validation:Enum=RollingOut;RolledOut;Failed
	Outcome RevisionOutcome `json:"outcome,omitempty"`
}

// RevisionOutcome is how the rollout of a revision went.
type RevisionOutcome string

// The outcomes of a revision's rollout.
const (
	RevisionRollingOut RevisionOutcome = "RollingOut"
	RevisionRolledOut  RevisionOutcome = "RolledOut"
	RevisionFailed     RevisionOutcome = "Failed"
)

// WorkflowStatus has the JSON shape of appsv1.DeploymentStatus (the seed's
// `workflow`). It is spelled out because the upstream type marks its
// conditions a map keyed by an optional field, which a CRD schema rejects.
// It leaves out the Deployment's terminatingReplicas: the old Pods of a
// rollout end after the rollout is done (a grace period later, up to 30 s
// on a kubelet by default), so mirroring their count would add a status
// write after Ready, one per rollout, that no condition or tool reads. The
// Deployment shows them (kubectl get deployment -o yaml).
type WorkflowStatus struct {
	// observedGeneration is the Deployment generation the Deployment
	// controller last observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// replicas is the number of Pods targeted by the Deployment.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// updatedReplicas is the number of Pods with the current template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`
	// readyReplicas is the number of ready Pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// availableReplicas is the number of Pods available for minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// unavailableReplicas is the number of Pods still needed for 100% availability.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
	// conditions are the Deployment's conditions, as it reports them.
	// +listType=atomic
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Conditions []appsv1.DeploymentCondition `json:"conditions,omitempty"`
	// collisionCount is the Deployment's hash collision count.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`
}

// NewWorkflowStatus copies a Deployment's status.
func NewWorkflowStatus(s *appsv1.DeploymentStatus) WorkflowStatus {
	s = s.DeepCopy()
	return WorkflowStatus{
		ObservedGeneration:  s.ObservedGeneration,
		Replicas:            s.Replicas,
		UpdatedReplicas:     s.UpdatedReplicas,
		ReadyReplicas:       s.ReadyReplicas,
		AvailableReplicas:   s.AvailableReplicas,
		UnavailableReplicas: s.UnavailableReplicas,
		Conditions:          s.Conditions,
		CollisionCount:      s.CollisionCount,
	}
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.deployment.replicas,statuspath=.status.workflow.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=sunapp,categories=sunstrider
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.workflow.availableReplicas`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.workflow.replicas`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.service.type`
// +kubebuilder:printcolumn:name="Cluster-IP",type=string,JSONPath=`.status.clusterIP`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.currentRevision`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it names the Application's Service"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter): it names the Application's Service"

// Application is one workload: a Deployment and a Service kept in sync with
// a single object, their status mirrored back.
type Application struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the desired state of the Application.
	// +optional
	Spec ApplicationSpec `json:"spec,omitzero"`

	// status is the observed state of the Application. Until the operator first
	// writes it, it reads Ready=Unknown and Reconciling=True, reason Pending,
	// so that kstatus (Flux's health checks, Helm's --wait) sees a new
	// Application as InProgress, not Current (docs/conditions.md).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status ApplicationStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// ApplicationList contains a list of Application.
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Application `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Application{}, &ApplicationList{})
		return nil
	})
}
