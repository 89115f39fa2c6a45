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

// Package controller holds the one reconcile skeleton every controller of
// the operator follows, as code: Reconcile, the driver every kind's
// Reconcile calls with its Kind (its hooks). It runs, in this order:
//
//  1. Get the object from the cache (WrittenObjects.Get); NotFound ends it
//     (Kind.Gone), and so does a deletion in progress (the garbage
//     collector removes the children).
//  2. The kind's phases, reconcileX, observe and act: children are read
//     and written (applied, deleted, a Pod relabelled) only through
//     Children, which classifies every answer of the API server once
//     (Policy). A phase returns an error only when the API server did not
//     answer. A conflict or a stale read stops the later phases, for every
//     kind (no Service is made for a workload someone else runs).
//  3. Children.RecordEvents tells what was written (a log line, and one
//     Normal event when existing children changed or were deleted); then
//     a stale read ends the reconcile: the newer child's event brings the
//     next one.
//  4. Kind.ComputeStatus sets the new status from what was observed: a
//     pure function of the kind, table-tested, that reads Ready's reason
//     for a conflict or a refusal from Children.NotReady, and builds its
//     conditions with MergeConditions (which keeps lastTransitionTime and
//     derives Reconciling and Stalled from the kind's ReasonClasses).
//  5. StatusWriter writes it once, only if it changed, and records a
//     Warning when the object becomes Stalled.
//  6. Children.Result decides the retry, the same way for every kind.
//
// Every kind's own watch (For) drops the event of its own status write
// (WrittenObjects.SkipOwnWrites), whose reconcile would write nothing.
//
// The runtime plumbing under the controllers (cache, transforms, rate
// limiter, priority, lazy watches) is package machinery. Behaviour that
// differs on purpose is named at the kind's kind() method.
package controller
