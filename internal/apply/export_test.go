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

package apply

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SyncedAnswered is how many checks s answered without InSync.
func SyncedAnswered(s *SyncedChildren) int64 { return s.answered.Load() }

// Ensure, for the tests, makes the child desired (typed, with its kind and owner reference
// set) exist as desired, for the parent whose UID is ownerUID: Observe,
// then Write. live is an empty object of desired's type, filled with the
// child as read.
func (a *Applier) Ensure(ctx context.Context, ownerUID types.UID, desired, live client.Object) (Outcome, error) {
	found, conflict, err := a.Observe(ctx, ownerUID, client.ObjectKeyFromObject(desired), live)
	if err != nil || conflict != "" {
		return Outcome{Conflict: conflict}, err
	}
	if !found {
		live = nil
	}
	return a.Write(ctx, desired, live)
}
