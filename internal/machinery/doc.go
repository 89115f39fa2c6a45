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

// Package machinery is the runtime plumbing under the controllers, knowing
// no kind of the operator: the manager's cache setup and its transforms
// (Pods, Nodes and ConfigMaps cached as what is read of them, strings
// interned), the memoized REST mapper, the API client's settings, the
// controllers' rate limiter and options, the priority given to an owner
// whose child became ready, ownership predicates, and a watch started on
// first use.
//
// The reconcile skeleton the controllers follow is in package controller
// (internal/controller); what the plumbing is hand-written for, where
// controller-runtime and client-go have no equivalent, is said at each
// type.
package machinery
