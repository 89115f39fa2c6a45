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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/settings"
)

// workloadSettings are the operator settings one reconcile of a Guestbook
// uses: from the live Settings when the reconciler has them, else from its
// Image and ConflictRecheck fields (and then no system namespace is
// allowed).
type workloadSettings struct {
	image           string
	resources       *corev1.ResourceRequirements
	conflictRecheck time.Duration
	// systemNamespaces are the kube-* namespaces Guestbooks may use.
	systemNamespaces []string
}

func (r *GuestbookReconciler) settings() workloadSettings {
	if r.Settings == nil {
		return workloadSettings{
			image:           r.Image,
			conflictRecheck: machinery.OrDefault(r.ConflictRecheck, settings.DefaultConflictRecheckInterval),
		}
	}
	s := r.Settings.Load()
	return workloadSettings{
		image:            s.GuestbookImage,
		resources:        &s.GuestbookResources,
		conflictRecheck:  machinery.OrDefault(s.ConflictRecheckInterval, settings.DefaultConflictRecheckInterval),
		systemNamespaces: s.GuestbookSystemNamespaces,
	}
}

// desiredStatefulSetWith is desiredStatefulSet with the settings' image and
// resources.
func desiredStatefulSetWith(gb *webappv1.Guestbook, ws workloadSettings, checksum string) (*appsv1.StatefulSet, error) {
	sts, err := desiredStatefulSet(gb, ws.image, checksum)
	if err != nil || ws.resources == nil || (len(ws.resources.Requests) == 0 && len(ws.resources.Limits) == 0) {
		return sts, err
	}
	sts.Spec.Template.Spec.Containers[0].Resources = *ws.resources.DeepCopy()
	return sts, apply.SetHash(sts)
}

// watchSettings reconciles every Guestbook when the settings their
// workload is made from change.
func (r *GuestbookReconciler) watchSettings(b *builder.Builder) *builder.Builder {
	if r.Settings == nil {
		return b
	}
	return b.WatchesRawSource(source.Channel(r.Settings.Subscribe(settings.GuestbookChanged),
		handler.EnqueueRequestsFromMapFunc(r.allGuestbooks)))
}

func (r *GuestbookReconciler) allGuestbooks(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &webappv1.GuestbookList{}
	if err := r.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list guestbooks after a settings change")
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}
