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

// Package apply holds what every controller of this operator shares when it
// owns child objects: one field owner for server-side apply, the ownership
// rules, and the drift check that keeps the operator silent at steady state.
//
// A child's write reads in one direction through the files:
//
//   - applier.go: the Applier, its entry points Observe (is the child
//     there, and whose is it) and Write, and its Outcome;
//   - write_create.go: an absent child is created, never applied, and an
//     object of its name that refuses the create is read (existing);
//   - write_update.go: an existing child is applied, with its UID as a
//     precondition, when it drifted, and what other managers own in the
//     operator's domain is taken over;
//   - memory.go: whether it drifted, answered from what the controller
//     remembers of the child (Memory, SyncedChildren) before InSync;
//     memory_created.go: children created that the cache does not hold yet;
//   - insync.go: InSync, whether a live object holds a desired one;
//   - fields.go: the managed fields of other managers (ForeignFields) and
//     their takeover, and the cache transform that keeps only those;
//   - answers.go: what the API server's answers mean (Answered, a refusal's
//     message); ownership.go: the field owner, labels and ownership rules.
package apply
