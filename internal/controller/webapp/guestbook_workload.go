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

package webapp

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/machinery"
)

// reconcileConfigMap sets the checksum of gb's configuration.
//
// Differs on purpose: the ConfigMap the Guestbook uses is the user's once
// it exists, whoever made it (never a conflict, its data never reverted):
// it is only read. A missing one is created with default settings, owned
// by gb, and told by its own Normal event, ConfigMapCreated (the user may
// want to edit it). The cache holds a ConfigMap the operator did not make
// without its data (machinery.ConfigMapTransform), but with the data's
// checksum.
func (r *GuestbookReconciler) reconcileConfigMap(ctx context.Context, s *guestbookScope) error {
	key := client.ObjectKey{Namespace: namespaceOf(s.gb), Name: s.gb.Spec.ConfigMapName}
	cm := &corev1.ConfigMap{}
	found, err := apply.Get(ctx, r.Client, r.APIReader, key, cm)
	if err != nil {
		return err
	}
	if found {
		s.checksum, s.configured = machinery.ConfigMapChecksum(cm), true
		return nil
	}

	desired, err := desiredConfigMap(s.gb)
	if err != nil {
		return err
	}
	created, err := s.children.Write(ctx, desired, nil)
	if err != nil || created == nil {
		// Refused (reported) or made by someone else meanwhile (stale).
		return err
	}
	r.Recorder.Eventf(s.gb, desired, corev1.EventTypeNormal, "ConfigMapCreated", "Create",
		"Created ConfigMap %s with default settings", key)
	s.checksum, s.configured = configChecksum(desired.Data, desired.BinaryData), true
	return nil
}
