/*
Copyright 2026.

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

package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes obj's status as a merge patch computed from orig, the
// cached copy it was derived from, and reports whether it wrote. The patch
// carries orig's resourceVersion: a diff from a stale copy would otherwise
// leave a mix of a newer write and this one. A stale copy is dropped (the
// newer version's event triggers the next reconcile), and so is an object
// deleted meanwhile, which needs no status.
func PatchStatus(ctx context.Context, c client.StatusClient, orig, obj client.Object) (bool, error) {
	patch := client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	err := c.Status().Patch(ctx, obj, patch)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(1).Info("Cached object is stale, waiting for the newer one")
		return false, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("patching status of %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
}

// StatusWriter is the one status path of every kind: compare, patch once,
// and tell a person when the object became stuck.
type StatusWriter struct {
	// Client writes the status subresource.
	Client client.StatusClient
	// Recorder records the Warning of a transition into Stalled.
	Recorder events.EventRecorder
	// Conditions returns the status conditions of an object of the kind.
	Conditions func(client.Object) []metav1.Condition
}

// Write writes obj's status when obj differs from orig, the cached copy its
// status was computed from (a reconcile changes nothing else), and reports
// whether it wrote. After a write that makes obj Stalled, or changes why it
// is, it records a Warning event with Stalled's reason and message: once
// per transition, since orig was current (a stale orig is not written).
func (w StatusWriter) Write(ctx context.Context, orig, obj client.Object) (bool, error) {
	if equality.Semantic.DeepEqual(orig, obj) {
		return false, nil
	}
	written, err := PatchStatus(ctx, w.Client, orig, obj)
	if err != nil || !written {
		return written, err
	}
	now := meta.FindStatusCondition(w.Conditions(obj), ConditionStalled)
	if now == nil || now.Status != metav1.ConditionTrue {
		return true, nil
	}
	before := meta.FindStatusCondition(w.Conditions(orig), ConditionStalled)
	if before != nil && before.Status == now.Status && before.Reason == now.Reason && before.Message == now.Message {
		return true, nil
	}
	w.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
	return true, nil
}
