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
	"k8s.io/apimachinery/pkg/runtime/schema"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/access"
)

// myCustomResourcesResource is the resource of MyCustomResource, for its
// refusals.
var myCustomResourcesResource = schema.GroupResource{Group: pocv1.GroupVersion.Group, Resource: "mycustomresources"}

// myCustomResourceAccess returns what the operator does for obj, which its
// author must be allowed to do: read the friend Pod spec.name in obj's
// namespace (its status tells whether that Pod exists and is ready).
func myCustomResourceAccess(obj *pocv1.MyCustomResource) []access.Check {
	return []access.Check{{Verb: "get", Resource: "pods", Namespace: obj.Namespace, Name: obj.Spec.Name}}
}
