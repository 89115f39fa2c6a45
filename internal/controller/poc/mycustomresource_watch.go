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

package poc

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
)

// friendNameField is the cache index of MyCustomResources by spec.name.
const friendNameField = "spec.name"

// friendNameIndexValue is the IndexerFunc of friendNameField.
func friendNameIndexValue(obj client.Object) []string {
	cr, ok := obj.(*pocv1.MyCustomResource)
	if !ok || cr.Spec.Name == "" {
		return nil
	}
	return []string{cr.Spec.Name}
}

// requestsForPod maps a Pod to the MyCustomResources of its namespace whose
// spec.name is the Pod's name, through the friendNameField index.
func (r *MyCustomResourceReconciler) requestsForPod(ctx context.Context, pod client.Object) []reconcile.Request {
	var list pocv1.MyCustomResourceList
	if err := r.List(ctx, &list,
		client.InNamespace(pod.GetNamespace()),
		client.MatchingFields{friendNameField: pod.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list MyCustomResources for Pod", "pod", klog.KObj(pod))
		return nil
	}
	requests := make([]reconcile.Request, 0, len(list.Items))
	for _, item := range list.Items {
		requests = append(requests, reconcile.Request{
			NamespacedName: types.NamespacedName{Namespace: item.Namespace, Name: item.Name},
		})
	}
	return requests
}
