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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DrinkSpec is the desired state of a v1alpha1 Drink: the whole order in
// one free-text string.
//
// Difference from v1: v1 splits the order into spec.name and spec.drink.
// "<drink> for <name>" is cut at its first " for ", so a v1 drink that
// itself contains " for " (such as "tea for two") cannot be told apart from
// the name here; the conversion then keeps the exact v1 spec in the
// annotation example.com/v1-spec (see drink_conversion.go).
//
// The order must hold a drink and a name valid in v1: the drink lowercase
// words of a-z and 0-9 separated by single spaces or hyphens, each part at
// most 253 characters, no control characters.
type DrinkSpec struct {
	// order is the drink and the name of the order, written
	// "<drink> for <name>", for example "coffee for my-drink". It is cut at
	// its first " for ": the drink is before it, the name after it.
	// +required
	// +kubebuilder:validation:MinLength=7
	// +kubebuilder:validation:MaxLength=511
	// +kubebuilder:validation:XValidation:rule="self.indexOf(' for ') > 0 && self.indexOf(' for ') + 5 < self.size()",message="order must read '<drink> for <name>'"
	// +kubebuilder:validation:XValidation:rule="self.indexOf(' for ') <= 0 || self.substring(0, self.indexOf(' for ')).matches('^[a-z0-9]+([ -][a-z0-9]+)*$')",message="the drink of the order must be lowercase words of a-z and 0-9 separated by single spaces or hyphens"
	// +kubebuilder:validation:XValidation:rule="self.indexOf(' for ') <= 0 || (self.indexOf(' for ') <= 253 && self.size() - self.indexOf(' for ') - 5 <= 253)",message="the drink and the name of the order must each be at most 253 characters"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
	Order string `json:"order"`
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
// +kubebuilder:deprecatedversion:warning="example.com/v1alpha1 Drink is deprecated; use example.com/v1 Drink"
// +kubebuilder:resource:shortName=sundrink,categories=sunstrider
// +kubebuilder:printcolumn:name="Order",type=string,JSONPath=`.spec.order`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ConfigMap",type=string,JSONPath=`.status.configMapName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Drink is a drink order, kept by the operator in a ConfigMap of the same
// name. v1alpha1 is deprecated: it is served for existing clients and
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
