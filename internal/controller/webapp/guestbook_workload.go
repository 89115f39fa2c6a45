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
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
)

// namespaceExists reports whether namespace exists and is not terminating.
// It reads the metadata-only cache that the Namespace watch fills.
func (r *GuestbookReconciler) namespaceExists(ctx context.Context, namespace string) (bool, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("getting namespace %s: %w", namespace, err)
	}
	return ns.DeletionTimestamp.IsZero(), nil
}

// reconcileConfigMap returns the checksum of gb's configuration. A
// ConfigMap that exists is used as it is, whoever made it; a missing one is
// created with default settings, owned by gb. The created ConfigMap is then
// the user's to edit: the operator does not revert its data. The cache
// holds a ConfigMap the operator did not make without its data
// (controllers.ConfigMapTransform), but with the data's checksum.
func (r *GuestbookReconciler) reconcileConfigMap(ctx context.Context, gb *webappv1.Guestbook) (string, error) {
	key := client.ObjectKey{Namespace: namespaceOf(gb), Name: gb.Spec.ConfigMapName}
	cm := &corev1.ConfigMap{}
	found, err := apply.Get(ctx, r.Client, r.APIReader, key, cm)
	if err != nil {
		return "", err
	}
	if found {
		return controllers.ConfigMapChecksum(cm), nil
	}

	desired, err := desiredConfigMap(gb)
	if err != nil {
		return "", err
	}
	applier := &apply.Applier{Client: r.Client, APIReader: r.APIReader}
	out, err := applier.Write(ctx, desired, nil)
	if err != nil {
		return "", err
	}
	if out.Rejected != nil {
		return "", &refusal{message: apply.RefusalMessage("ConfigMap", out.Rejected), err: out.Rejected}
	}
	ctrl.LoggerFrom(ctx).Info("Created configmap with default settings", "configMap", key)
	r.Recorder.Eventf(gb, desired, corev1.EventTypeNormal, "ConfigMapCreated", "Create",
		"Created ConfigMap %s with default settings", key)
	return configChecksum(desired.Data, desired.BinaryData), nil
}

// ensureChild makes the child desired (a StatefulSet or a Service) exist as
// desired through the shared child path (apply.Applier), and returns the
// child as last seen. It never touches an object it does not control: then
// it returns a conflict message naming it. A write the API server refuses
// is returned as an error (the status keeps the last observation and the
// reconcile is retried); a child changed meanwhile is left to its event.
func (r *GuestbookReconciler) ensureChild(ctx context.Context, gb *webappv1.Guestbook, desired, live client.Object) (client.Object, string, error) {
	applier := &apply.Applier{Client: r.Client, APIReader: r.APIReader}
	out, err := applier.Ensure(ctx, gb.UID, desired, live)
	if err != nil {
		return nil, "", err
	}
	if out.Conflict != "" {
		return nil, fmt.Sprintf("%s exists and is not controlled by Guestbook %s", out.Conflict, gb.Name), nil
	}
	kind, key := desired.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(desired)
	if out.Rejected != nil {
		return out.Live, "", &refusal{message: apply.RefusalMessage(kind, out.Rejected), err: out.Rejected}
	}
	if out.Action != apply.Unchanged {
		ctrl.LoggerFrom(ctx).Info(string(out.Action)+" child", "kind", kind, "name", key)
		r.Recorder.Eventf(gb, desired, corev1.EventTypeNormal, kind+string(out.Action), strings.TrimSuffix(string(out.Action), "d"),
			"%s %s %s", out.Action, kind, key)
	}
	return out.Live, "", nil
}

// observeChild reads the child at key into live without writing it: found
// when it exists and is gb's; a conflict message when it is someone
// else's.
func (r *GuestbookReconciler) observeChild(ctx context.Context, gb *webappv1.Guestbook, key client.ObjectKey,
	live client.Object) (found bool, conflict string, err error) {
	applier := &apply.Applier{Client: r.Client, APIReader: r.APIReader}
	found, conflict, err = applier.Observe(ctx, gb.UID, key, live)
	if err != nil || conflict == "" {
		return found, "", err
	}
	return false, fmt.Sprintf("%s exists and is not controlled by Guestbook %s", conflict, gb.Name), nil
}

// refusal is the API server's answer to a child's write: reported in the
// status (a person may have to act), then retried with backoff.
type refusal struct {
	message string
	err     error
}

func (r *refusal) Error() string { return r.message }
func (r *refusal) Unwrap() error { return r.err }
