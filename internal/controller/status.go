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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
