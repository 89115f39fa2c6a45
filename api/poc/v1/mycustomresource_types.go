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

// MyCustomResourceSpec is the desired state of a MyCustomResource: the name
// of the friend Pod it looks for in its own namespace.
type MyCustomResourceSpec struct {
	// name is the name of the friend Pod, looked up in the namespace of the
	// MyCustomResource (never in other namespaces). It must be a valid Pod
	// name: a DNS-1123 subdomain of at most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// MyCustomResourceStatus is the observed state of a MyCustomResource. It is
// computed from the friend Pod on every reconcile, never from its previous
// value.
type MyCustomResourceStatus struct {
	// Healthy is true while a Pod named spec.name exists in the
	// MyCustomResource's namespace and is not being deleted. The JSON name
	// keeps the capital letter of the original API.
	// +optional
	Healthy bool `json:"Healthy"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions describe the friend Pod: FriendFound, FriendReady and the
	// Ready summary, and Reconciling, with Ready's reason, while Ready is not
	// True, as kstatus and Flux read it. Their reasons are the Reason*
	// constants of this package (docs/conditions.md).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Healthy",type=boolean,JSONPath=`.status.Healthy`
// +kubebuilder:printcolumn:name="FriendReady",type=string,JSONPath=`.status.conditions[?(@.type=="FriendReady")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:categories=sunstrider

// MyCustomResource looks for a friend: a Pod of a given name in its own
// namespace, and reports whether it exists and is ready.
type MyCustomResource struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec is the desired state of the MyCustomResource.
	// +required
	Spec MyCustomResourceSpec `json:"spec"`

	// status is the observed state of the MyCustomResource. Until the operator first
	// writes it, it reads Ready=Unknown and Reconciling=True, reason Pending,
	// so that kstatus (Flux's health checks, Helm's --wait) sees a new
	// MyCustomResource as InProgress, not Current (docs/conditions.md).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status MyCustomResourceStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// MyCustomResourceList contains a list of MyCustomResource.
type MyCustomResourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []MyCustomResource `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &MyCustomResource{}, &MyCustomResourceList{})
		return nil
	})
}
