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

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/access"
)

// guestbooksResource is the resource of Guestbook, for its refusals.
var guestbooksResource = schema.GroupResource{Group: webappv1.GroupVersion.Group, Resource: "guestbooks"}

// guestbookAccess returns what the operator does for gb, which its author
// must be allowed to do in spec.namespace, where the workload lands: create
// and update its StatefulSet and Service, and read the ConfigMap
// spec.configMapName that its instances mount. (A Guestbook is
// cluster-scoped: without this, whoever may create one gets a workload in
// any namespace, kube-system included.)
func guestbookAccess(gb *webappv1.Guestbook) []access.Check {
	ns := gb.Spec.Namespace
	if ns == "" {
		ns = webappv1.DefaultNamespace
	}
	checks := append(access.Writes("apps", "statefulsets", ns), access.Writes("", "services", ns)...)
	return append(checks, access.Check{Verb: "get", Resource: "configmaps", Namespace: ns, Name: gb.Spec.ConfigMapName})
}
