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

package settings

import (
	"slices"
	"strings"
)

// SystemNamespacePrefix starts the names of the namespaces Kubernetes
// keeps for itself (kube-system, kube-public, kube-node-lease): a workload
// there runs beside the cluster's own, often with more privilege (Pod
// Security exemptions, ServiceAccounts of the control plane).
const SystemNamespacePrefix = "kube-"

// GuestbookSystemNamespacesField is the OperatorConfiguration field that
// lists the system namespaces Guestbooks may use, for messages.
const GuestbookSystemNamespacesField = "spec.guestbookSystemNamespaces"

// GuestbookNamespaceRefused reports whether a Guestbook may not run its
// workload in namespace ns: a system namespace (SystemNamespacePrefix) that
// allowed, the OperatorConfiguration's guestbookSystemNamespaces, does not
// list. Every other namespace is left to RBAC (the admission check of
// spec.childAccess) and to watchNamespaces.
func GuestbookNamespaceRefused(ns string, allowed []string) bool {
	return strings.HasPrefix(ns, SystemNamespacePrefix) && !slices.Contains(allowed, ns)
}
