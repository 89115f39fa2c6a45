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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

const (
	// indexNamespace indexes Guestbooks by the namespace of their workload.
	indexNamespace = "webapp.spec.namespace"
	// indexConfigMap indexes Guestbooks by "<namespace>/<configMapName>".
	indexConfigMap = "webapp.spec.configMapName"
)

func setupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &webappv1.Guestbook{}, indexNamespace, func(o client.Object) []string {
		return []string{namespaceOf(o.(*webappv1.Guestbook))}
	}); err != nil {
		return fmt.Errorf("indexing guestbooks by namespace: %w", err)
	}
	if err := indexer.IndexField(ctx, &webappv1.Guestbook{}, indexConfigMap, func(o client.Object) []string {
		gb := o.(*webappv1.Guestbook)
		return []string{configMapKey(namespaceOf(gb), gb.Spec.ConfigMapName)}
	}); err != nil {
		return fmt.Errorf("indexing guestbooks by configmap: %w", err)
	}
	return nil
}

func configMapKey(namespace, name string) string { return namespace + "/" + name }

// guestbookForPod maps a Pod to the Guestbook named by its LabelGuestbook.
func guestbookForPod(_ context.Context, pod client.Object) []reconcile.Request {
	name := pod.GetLabels()[LabelGuestbook]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
}

// guestbooksForConfigMap maps a ConfigMap to the Guestbooks configured by it.
func (r *GuestbookReconciler) guestbooksForConfigMap(ctx context.Context, cm client.Object) []reconcile.Request {
	return r.guestbooksMatching(ctx, indexConfigMap, configMapKey(cm.GetNamespace(), cm.GetName()))
}

// guestbooksForNamespace maps a Namespace to the Guestbooks running in it.
func (r *GuestbookReconciler) guestbooksForNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	return r.guestbooksMatching(ctx, indexNamespace, ns.GetName())
}

func (r *GuestbookReconciler) guestbooksMatching(ctx context.Context, index, value string) []reconcile.Request {
	list := &webappv1.GuestbookList{}
	if err := r.List(ctx, list, client.MatchingFields{index: value}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list guestbooks for a watched object", "index", index, "value", value)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}})
	}
	return reqs
}
