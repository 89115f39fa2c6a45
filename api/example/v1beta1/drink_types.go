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

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DrinkSize is the size of a v1beta1 drink.
// +kubebuilder:validation:Enum=Small;Medium;Large
type DrinkSize string

// Sizes of a drink.
const (
	// SizeSmall is a small drink.
	SizeSmall DrinkSize = "Small"
	// SizeMedium is a medium drink.
	SizeMedium DrinkSize = "Medium"
	// SizeLarge is a large drink.
	SizeLarge DrinkSize = "Large"
)

// Sizes lists every valid DrinkSize, smallest first.
var Sizes = []DrinkSize{SizeSmall, SizeMedium, SizeLarge}

// DrinkSpec is the desired state of a v1beta1 Drink.
//
// Difference from v1: the drink is a structure, spec.drink.kind (v1's
// spec.drink) and an optional spec.drink.size that v1 does not have. The
// conversion keeps the size on the v1 Drink in the annotation
// example.com/v1beta1-drink-size (see drink_conversion.go), so it comes
// back when the Drink is read as v1beta1 again.
type DrinkSpec struct {
	// name is the name of the drink, copied to the ConfigMap's `name` key.
	// It is free text of 1 to 253 characters without control characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
	Name string `json:"name"`

	// drink describes the drink: its kind and its size.
	// +required
	Drink DrinkDetails `json:"drink"`
}

// DrinkDetails describes a v1beta1 drink.
type DrinkDetails struct {
	// kind is the kind of drink (coffee, tea, green tea, ...), v1's
	// spec.drink: 1 to 253 characters, lowercase words of a-z and 0-9
	// separated by single spaces or hyphens.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([ -][a-z0-9]+)*$')",message="must be lowercase words of a-z and 0-9 separated by single spaces or hyphens"
	Kind string `json:"kind"`

	// size is the size of the drink: Small, Medium or Large. v1 has no
	// size; the operator ignores it.
	// +optional
	Size DrinkSize `json:"size,omitempty"`
}

// DrinkStatus is the observed state of a Drink, the same in every version
// (see example.com/v1 for the conditions and their reasons).
type DrinkStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// configMapName is the name of the ConfigMap holding the drink, set while
	// the Drink controls that ConfigMap.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ConfigMapName string `json:"configMapName,omitempty"`

	// conditions describe the Drink: ConfigMapSynced and the Ready summary.
	// Their reasons are the Reason* constants of example.com/v1.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:deprecatedversion:warning="example.com/v1beta1 Drink is deprecated; use example.com/v1 Drink"
// +kubebuilder:resource:shortName=sundrink,categories=sunstrider
// +kubebuilder:printcolumn:name="Drink",type=string,JSONPath=`.spec.drink.kind`
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=`.spec.drink.size`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ConfigMap",type=string,JSONPath=`.status.configMapName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Drink is a drink order, kept by the operator in a ConfigMap of the same
// name. v1beta1 is deprecated: it is served for existing clients and
// stored as example.com/v1.
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
