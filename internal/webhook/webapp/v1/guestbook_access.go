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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/access"
)

// guestbooksResource is the resource of Guestbook, for its refusals.
var guestbooksResource = schema.GroupResource{Group: webappv1.GroupVersion.Group, Resource: "guestbooks"}

// guestbookAccess returns what the operator does for gb, which its author
// must be allowed to do in spec.namespace, where the workload lands: create
// and update its StatefulSet and Service, read the ConfigMap
// spec.configMapName that its instances mount and, when configMapExists is
// false, create that ConfigMap, which the operator then makes with default
// settings. (A Guestbook is cluster-scoped: without this, whoever may
// create one gets a workload, or a ConfigMap, in any namespace.)
func guestbookAccess(gb *webappv1.Guestbook, configMapExists bool) []access.Check {
	ns := namespaceOf(gb)
	checks := append(access.Writes("apps", "statefulsets", ns), access.Writes("", "services", ns)...)
	checks = append(checks, access.Check{Verb: "get", Resource: "configmaps", Namespace: ns, Name: gb.Spec.ConfigMapName})
	if !configMapExists {
		checks = append(checks, access.Check{Verb: "create", Resource: "configmaps", Namespace: ns})
	}
	return checks
}

// namespaceOf returns the namespace holding gb's workload: spec.namespace,
// which the defaulting webhook fills in.
func namespaceOf(gb *webappv1.Guestbook) string {
	if gb.Spec.Namespace == "" {
		return webappv1.DefaultNamespace
	}
	return gb.Spec.Namespace
}

// configMapExists tells whether the ConfigMap gb names exists, read from
// the API server (metadata only): when it does not, the operator will
// create it. A nil reader reports it missing, which asks the stricter
// check.
func configMapExists(ctx context.Context, reader client.Reader, gb *webappv1.Guestbook) (bool, error) {
	if reader == nil {
		return false, nil
	}
	cm := &metav1.PartialObjectMetadata{}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	key := client.ObjectKey{Namespace: namespaceOf(gb), Name: gb.Spec.ConfigMapName}
	switch err := reader.Get(ctx, key, cm); {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("looking up ConfigMap %s: %w", key, err)
	}
}
