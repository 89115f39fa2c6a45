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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GuestbookAlias is the kind of entry a guestbook records.
// +kubebuilder:validation:Enum=Phone;Address;Name
type GuestbookAlias string

const (
	// AliasPhone makes the guestbook record phone numbers.
	AliasPhone GuestbookAlias = "Phone"
	// AliasAddress makes the guestbook record addresses.
	AliasAddress GuestbookAlias = "Address"
	// AliasName makes the guestbook record names.
	AliasName GuestbookAlias = "Name"
)

// DefaultNamespace is the namespace holding a Guestbook's workload when
// spec.namespace is not set.
const DefaultNamespace = "default"

// GuestbookSpec defines the desired state of Guestbook: an active/standby
// group of guestbook instances in one namespace, one of which serves.
type GuestbookSpec struct {
	// size is the number of guestbook instances, the active one included.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +required
	Size int32 `json:"size"`

	// configMapName is the name of the ConfigMap, in spec.namespace, holding
	// the guestbook configuration. When it does not exist the operator
	// creates it with default settings (and deletes it with the Guestbook);
	// an existing ConfigMap is used as it is and never changed. Changing its
	// data restarts the instances.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	ConfigMapName string `json:"configMapName"`

	// alias is the kind of entry the guestbook records, passed to every
	// instance in the GUESTBOOK_ALIAS environment variable. When unset the
	// variable is not set and the application default applies.
	// +optional
	Type GuestbookAlias `json:"alias,omitempty"`

	// namespace is the namespace holding the guestbook's workload
	// (StatefulSet, Service, ConfigMap). It must exist; it is not created.
	// It cannot be changed once set.
	// +kubebuilder:default=default
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="namespace is immutable"
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// GuestbookStatus is the observed state of a Guestbook. It is computed from
// its StatefulSet and Pods on every reconcile, never from its previous value.
type GuestbookStatus struct {
	// active is the name of the Pod of the active instance, the one the
	// Service sends traffic to. Empty when no instance is ready.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Active string `json:"active,omitempty"`

	// standby lists the names of the Pods of the other instances, by ordinal.
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=atomic
	// +optional
	Standby []string `json:"standby,omitempty"`

	// readyReplicas is the number of instances whose Pod is Ready.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// observedGeneration is the metadata.generation this status was computed
	// from.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions describe the state of the Guestbook. "Ready" is True when
	// the StatefulSet has rolled out, every instance is ready and one of
	// them is active; "Available" is True when an active instance serves.
	// While Ready is not True, either "Reconciling" (the operator works on
	// it) or "Stalled" (a person must act) is True with Ready's reason, as
	// kstatus and Flux read them. See guestbook_conditions.go for the
	// reasons (docs/conditions.md).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=gb,categories=sunstrider
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.active`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label of at most 52 characters (it names the StatefulSet and the Service)"

// Guestbook is an active/standby guestbook: a StatefulSet of spec.size
// instances in spec.namespace of which exactly one ready instance is active
// and receives the traffic of the Service of the same name.
type Guestbook struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the desired state of the Guestbook.
	// +required
	Spec GuestbookSpec `json:"spec"`

	// status is the observed state of the Guestbook. Until the operator first
	// writes it, it reads Ready=Unknown and Reconciling=True, reason Pending,
	// so that kstatus (Flux's health checks, Helm's --wait) sees a new
	// Guestbook as InProgress, not Current (docs/conditions.md).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status GuestbookStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// GuestbookList contains a list of Guestbook.
type GuestbookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Guestbook `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Guestbook{}, &GuestbookList{})
		return nil
	})
}
