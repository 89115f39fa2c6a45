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

// DrinkSpec is the desired state of a Drink. The operator copies it into a
// ConfigMap named after the Drink.
type DrinkSpec struct {
	// name is the name of the drink, copied to the ConfigMap's `name` key.
	// It is free text of 1 to 253 characters without control characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
	Name string `json:"name"`

	// drink is the kind of drink (coffee, tea, green tea, ...), copied to
	// the ConfigMap's `drink` key: 1 to 253 characters, lowercase words of
	// a-z and 0-9 separated by single spaces or hyphens. The defaulting
	// webhook trims it, collapses its spaces and lowercases it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([ -][a-z0-9]+)*$')",message="must be lowercase words of a-z and 0-9 separated by single spaces or hyphens"
	Drink string `json:"drink"`
}

// DrinkStatus is the observed state of a Drink. It is computed from the
// ConfigMap on every reconcile, never from its previous value.
type DrinkStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// configMapName is the name of the ConfigMap holding the drink, set while
	// the Drink controls that ConfigMap.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ConfigMapName string `json:"configMapName,omitempty"`

	// conditions describe the Drink: ConfigMapSynced and the Ready summary,
	// and, while Ready is not True, either Reconciling (the operator works
	// on it) or Stalled (a person must act), with Ready's reason, as kstatus
	// and Flux read them. Their reasons are the Reason* constants of this
	// package (docs/conditions.md).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=sundrink,categories=sunstrider
// +kubebuilder:printcolumn:name="Drink",type=string,JSONPath=`.spec.drink`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ConfigMap",type=string,JSONPath=`.status.configMapName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Drink is a drink order, kept by the operator in a ConfigMap of the same
// name (keys `name` and `drink`).
//
// v1 is the hub of the Drink conversions and the version stored in etcd.
// The older versions v1alpha1 and v1beta1 are still served and converted
// losslessly to and from v1 (see docs/drink-versions.md); a v1 Drink may
// carry the annotation example.com/v1beta1-drink-size written by that
// conversion.
type Drink struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the desired state of the Drink.
	// +required
	Spec DrinkSpec `json:"spec"`

	// status is the observed state of the Drink. Until the operator first
	// writes it, it reads Ready=Unknown and Reconciling=True, reason Pending,
	// so that kstatus (Flux's health checks, Helm's --wait) sees a new
	// Drink as InProgress, not Current (docs/conditions.md).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status DrinkStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// DrinkList contains a list of Drink.
type DrinkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Drink `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Drink{}, &DrinkList{})
		return nil
	})
}
