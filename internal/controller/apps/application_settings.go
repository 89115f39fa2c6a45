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

package apps

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/settings"
)

// conflictRecheck is the live conflict recheck interval when the reconciler
// has Settings, else its ConflictRecheck field.
func (r *ApplicationReconciler) conflictRecheck() time.Duration {
	if r.Settings != nil {
		return machinery.OrDefault(r.Settings.Load().ConflictRecheckInterval, settings.DefaultConflictRecheckInterval)
	}
	return machinery.OrDefault(r.ConflictRecheck, settings.DefaultConflictRecheckInterval)
}

// watchSettings reconciles the Applications blocked by a conflict when the
// recheck interval changes, so that the new one applies at once.
func (r *ApplicationReconciler) watchSettings(b *builder.Builder) *builder.Builder {
	if r.Settings == nil {
		return b
	}
	return b.WatchesRawSource(source.Channel(r.Settings.Subscribe(settings.RecheckChanged),
		handler.EnqueueRequestsFromMapFunc(r.blockedApplications)))
}

func (r *ApplicationReconciler) blockedApplications(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &sunappsv1.ApplicationList{}
	if err := r.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list applications after a settings change")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if meta.IsStatusConditionPresentAndEqual(list.Items[i].Status.Conditions,
			sunappsv1.ConditionReady, "False") &&
			meta.FindStatusCondition(list.Items[i].Status.Conditions, sunappsv1.ConditionReady).Reason ==
				sunappsv1.ReasonResourceConflict {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}
