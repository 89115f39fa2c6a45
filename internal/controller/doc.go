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
// the operator follows, and what they share to follow it. Each kind's
// Reconcile reads in the same order:
//
//  1. Get the object from the cache (WrittenObjects.Get); NotFound ends it,
//     and so does a deletion in progress (the garbage collector removes the
//     children).
//  2. Observe and act in small phases, reconcileX: children are read and
//     written only through Children (Observe, Write, Ensure), which
//     classifies every answer of the API server once (Policy). A phase
//     returns an error only when the API server did not answer.
//  3. Children.RecordEvents tells what was written (a log line, and one
//     Normal event when existing children changed); then a stale read
//     (Children.Stale) ends the reconcile: the newer child's event brings
//     the next one.
//  4. computeStatus(obj, observation) returns the new status: a pure
//     function, table-tested, that reads Ready's reason for a conflict or a
//     refusal from Children.NotReady and derives Reconciling and Stalled
//     with SetProgressConditions from the kind's ReasonClasses.
//  5. StatusWriter.Write writes it once, only if it changed, and records a
//     Warning when the object becomes Stalled.
//  6. Children.Result decides the retry, the same way for every kind.
//
// Every kind's own watch (For) drops the event of its own status write
// (WrittenObjects.SkipOwnWrites), whose reconcile would write nothing.
//
// Behaviour that differs on purpose is named in the kind's own file.
package controller
