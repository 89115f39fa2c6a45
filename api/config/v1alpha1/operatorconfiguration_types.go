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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConfigurationName is the name of the one OperatorConfiguration the
// operator reads; the API server refuses any other name.
const ConfigurationName = "default"

// LogLevel is a log verbosity: error, info, debug, or a number of V levels
// (0 is info, 1 is debug, 2 to 9 more verbose still), as --zap-log-level
// takes them.
// +kubebuilder:validation:MaxLength=5
// +kubebuilder:validation:Pattern=`^(error|info|debug|[0-9])$`
type LogLevel string

// Log levels with a name.
const (
	// LogLevelError logs errors only.
	LogLevelError LogLevel = "error"
	// LogLevelInfo logs errors and what the operator does (V level 0).
	LogLevelInfo LogLevel = "info"
	// LogLevelDebug adds the operator's debug messages (V level 1).
	LogLevelDebug LogLevel = "debug"
)

// ChildAccess says whose rights decide what an Application, Guestbook,
// Drink or MyCustomResource may make or read through the operator.
// Unenforced is for the status alone: the OperatorConfiguration's rule
// refuses it in the spec.
// +kubebuilder:validation:Enum=Requester;Delegated;Unenforced
type ChildAccess string

// Child access modes.
const (
	// ChildAccessRequester checks, at admission, that the user creating or
	// changing an object may themselves make its children (and read what it
	// reads) where they land: an object never grants more than the user's
	// RBAC. The default.
	ChildAccessRequester ChildAccess = "Requester"
	// ChildAccessDelegated skips that check: whoever may create an object of
	// the operator's kinds gets its children made with the operator's own
	// rights. For platforms that give users Applications and nothing else,
	// on purpose (docs/security.md).
	ChildAccessDelegated ChildAccess = "Delegated"
	// ChildAccessUnenforced is never asked for: status.effective reports
	// it when no access check runs at admission, whatever the spec says,
	// because the operator serves no admission webhooks
	// (--enable-webhooks=false, the chart's webhook.enabled=false) or the
	// cluster does not call them (no ValidatingWebhookConfiguration
	// registers them, as after make install and make run). The
	// AccessChecks condition says why and how to turn them on.
	ChildAccessUnenforced ChildAccess = "Unenforced"
)

// ControllersSpec turns the operator's controllers on and off. A field left
// unset means enabled. A change takes effect after a restart, which the
// operator does by itself.
type ControllersSpec struct {
	// application enables the Application controller (apps.sunstrider.cn).
	// +optional
	Application *bool `json:"application,omitempty"`
	// myCustomResource enables the MyCustomResource controller
	// (poc.test.domain).
	// +optional
	MyCustomResource *bool `json:"myCustomResource,omitempty"`
	// guestbook enables the Guestbook controller (webapp.my.domain).
	// +optional
	Guestbook *bool `json:"guestbook,omitempty"`
	// drink enables the Drink controller (example.com).
	// +optional
	Drink *bool `json:"drink,omitempty"`
}

// GuestbookResources are the compute resources of every Guestbook instance
// container. Only cpu, memory and ephemeral-storage may be named.
type GuestbookResources struct {
	// requests are the resources the scheduler reserves for each instance.
	// +kubebuilder:validation:MaxProperties=3
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'])",message="only cpu, memory and ephemeral-storage may be requested"
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// limits are the most each instance may use. A limit below its request
	// is refused (the status says so) and the resources in effect are kept.
	// +kubebuilder:validation:MaxProperties=3
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'])",message="only cpu, memory and ephemeral-storage may be limited"
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// OperatorConfigurationSpec is what an operator administrator changes without
// redeploying the operator. A field left unset takes the value of the
// manager's flag of the same purpose (e.g. --guestbook-image,
// --zap-log-level), else the built-in default. docs/configuration.md says
// which fields apply at once and which restart the operator.
type OperatorConfigurationSpec struct {
	// guestbookImage is the container image of Guestbook instances; changing
	// it rolls every Guestbook's StatefulSet out. Applies at once.
	// --guestbook-image when unset.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$`
	// +optional
	GuestbookImage string `json:"guestbookImage,omitempty"`

	// guestbookResources are the compute resources of Guestbook instances;
	// changing them rolls every Guestbook's StatefulSet out. Applies at
	// once. Built-in: requests cpu 10m and memory 32Mi, limit memory 64Mi.
	// +optional
	GuestbookResources *GuestbookResources `json:"guestbookResources,omitempty"`

	// conflictRecheckInterval is how often an Application or Guestbook
	// blocked by a foreign object in its child's place (ResourceConflict)
	// looks again, as a duration between 1s and 1h (e.g. 30s, 5m). Applies
	// at once. 30s when unset.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ms|s|m|h))+$') && duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="conflictRecheckInterval must be a duration between 1s and 1h, e.g. 30s or 5m"
	// +optional
	ConflictRecheckInterval string `json:"conflictRecheckInterval,omitempty"`

	// logLevel is the verbosity of the operator's log: error, info, debug,
	// or a number of V levels (0 = info, 1 = debug, up to 9). Applies at
	// once. --zap-log-level when unset.
	// +optional
	LogLevel LogLevel `json:"logLevel,omitempty"`

	// childAccess says whose rights decide what an object may make or read:
	// Requester (the default) refuses, at admission, an Application,
	// Guestbook, Drink or MyCustomResource whose creator or editor may not
	// themselves make its children (or read the Pod or ConfigMap it names)
	// where they land; Delegated lets anyone who may write the object have
	// its children made with the operator's rights. Applies at once, to the
	// next create or update. Changing it needs the verb delegate on
	// operatorconfigurations, which no built-in or aggregated role grants.
	// status.effective says Unenforced when no check runs at admission (no
	// webhooks served or registered). docs/security.md describes both.
	// +optional
	ChildAccess ChildAccess `json:"childAccess,omitempty"`

	// controllers turns controllers on and off; all are on by default. A
	// change restarts the operator.
	// +optional
	Controllers *ControllersSpec `json:"controllers,omitempty"`

	// watchNamespaces are the namespaces whose Applications,
	// MyCustomResources and Drinks the operator reconciles, and where it
	// watches children and Pods; empty means every namespace. Guestbooks
	// are cluster-scoped and always watched, but their workload namespace
	// must be listed. Every namespace listed must exist, or the list is
	// refused. A change restarts the operator.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	WatchNamespaces []string `json:"watchNamespaces,omitempty"`

	// guestbookSystemNamespaces are the system namespaces (named kube-*,
	// e.g. kube-system) where Guestbooks may run their workload. A
	// Guestbook whose spec.namespace starts with kube- and is not listed
	// is refused at admission, and one already stored is Stalled, with
	// nothing made there, whatever spec.childAccess says. Applies at once.
	// Empty when unset: no Guestbook in a kube-* namespace.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=6
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^kube-[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	GuestbookSystemNamespaces []string `json:"guestbookSystemNamespaces,omitempty"`
}

// RefusedField is a field of the spec the operator did not apply.
type RefusedField struct {
	// field is the path of the refused field, e.g. spec.watchNamespaces.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +required
	Field string `json:"field"`
	// message says why, for a person.
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Message string `json:"message"`
}

// OperatorConfigurationStatus is what the operator has in effect.
type OperatorConfigurationStatus struct {
	// observedGeneration is the metadata.generation this status was computed
	// from.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions describe the configuration's state. "Ready" is True when
	// every field of the spec is in effect. While it is not, either
	// "Reconciling" (RestartRequired: the operator restarts itself to apply
	// a change) or "Stalled" (Refused: a person must correct the spec) is
	// True with Ready's reason, as kstatus and Flux read them. See
	// operatorconfiguration_conditions.go (docs/conditions.md).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// effective is the configuration in effect in the operator, every field
	// filled in: from the spec, the manager's flags, the built-in defaults,
	// or, for a refused field, the last value in effect.
	// +optional
	Effective OperatorConfigurationSpec `json:"effective,omitzero"`

	// refused lists the fields of the spec that are not in effect, and why.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=field
	// +optional
	Refused []RefusedField `json:"refused,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=opconfig,categories=sunstrider
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",message="metadata.name must be 'default': the operator reads only that OperatorConfiguration"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.childAccess) || self.spec.childAccess != 'Unenforced'",message="spec.childAccess must be Requester or Delegated: Unenforced is what status.effective reports when no access check runs"

// OperatorConfiguration is the operator's configuration, one per cluster,
// named default. The operator's Deployment creates it at start (an init
// container, `manager init-config`) when it does not exist and never
// overwrites it.
type OperatorConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the configuration wanted.
	// +optional
	Spec OperatorConfigurationSpec `json:"spec,omitzero"`

	// status is the configuration in effect. Until the operator first
	// writes it, it reads Ready=Unknown and Reconciling=True, reason Pending,
	// so that kstatus (Flux's health checks, Helm's --wait) sees a new
	// OperatorConfiguration as InProgress, not Current (docs/conditions.md).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status OperatorConfigurationStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// OperatorConfigurationList contains a list of OperatorConfiguration
type OperatorConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []OperatorConfiguration `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &OperatorConfiguration{}, &OperatorConfigurationList{})
		return nil
	})
}
