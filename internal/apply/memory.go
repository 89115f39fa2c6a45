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
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Memory is what one controller remembers of its children between
// reconciles. Its zero value is ready.
type Memory struct {
	// Created holds the children it created that its cache does not hold
	// yet.
	Created CreatedChildren
	// Synced holds the children it found holding what they should.
	Synced SyncedChildren
}

// SyncedSize is how many children SyncedChildren remembers, the least
// recently checked forgotten first: two per Application for 32,768
// Applications. A child forgotten is only checked in full again.
const SyncedSize = 1 << 16

// SyncedChildren remembers, for one controller, which desired configuration
// (its applied-config hash) each child was last found to hold by InSync,
// and at which version of the child, so that the next check of the same
// desired configuration against the same version is answered without
// InSync.
//
// InSync converts both objects to unstructured: in a burst of Applications
// that was a visible share of the manager's CPU and allocations (the
// figures are in docs/performance.md), and most of it was spent on
// children that had not changed since the last check, only their status. The version that
// matters is the one of what the operator owns: the generation for the
// kinds whose every spec change moves it (Deployment, StatefulSet), so
// that the status writes of a Deployment's rollout do not count; the
// resourceVersion for the others (Service, ConfigMap). Labels, annotations
// and owner references, which no generation follows, are compared at every
// check (metadataHolds), directly on the typed objects. Fields another
// manager holds are found by ForeignFields, which Drifted runs first,
// every time.
//
// Hand-written: no library memoizes a comparison of a desired object with
// a live one; the remembering itself is k8s.io/utils' LRU.
type SyncedChildren struct {
	once sync.Once
	lru  *lru.Cache
	// answered counts the checks holds answered (for tests).
	answered atomic.Int64
}

// synced is what SyncedChildren remembers of a child: the hash of the
// desired configuration it held, and at which version.
type synced struct {
	hash, version string
}

func (s *SyncedChildren) cache() *lru.Cache {
	s.once.Do(func() { s.lru = lru.New(SyncedSize) })
	return s.lru
}

// Drifted reports whether live differs from desired in what the operator
// owns: a different applied-config hash or value (InSync), or a field
// inside the operator's domain that another manager owns (foreign; such
// fields must be taken over before an apply can remove them). InSync is
// answered from s when s remembers live holding desired at its present
// version; a nil s always compares in full. An InSync that finds live
// holding desired is remembered.
func (s *SyncedChildren) Drifted(desired, live client.Object) (drifted, foreign bool, err error) {
	fields, err := ForeignFields(live)
	if err != nil {
		return false, false, err
	}
	if len(fields) > 0 {
		return true, true, nil
	}
	if s.holds(desired, live) {
		return false, false, nil
	}
	inSync, err := InSync(desired, live)
	if err != nil {
		return false, false, err
	}
	if inSync {
		s.remember(desired, live)
	}
	return !inSync, false, nil
}

// holds tells whether live was found to hold desired (with its hash set,
// SetHash) at live's present version, and still holds its labels,
// annotations and owner references.
func (s *SyncedChildren) holds(desired, live client.Object) bool {
	if s == nil {
		return false
	}
	known, ok := s.cache().Get(live.GetUID())
	if !ok {
		return false
	}
	k := known.(synced)
	if k.hash != desired.GetAnnotations()[HashAnnotation] || k.version != versionOf(live) || !metadataHolds(desired, live) {
		return false
	}
	s.answered.Add(1)
	return true
}

// remember records that InSync found live holding desired.
func (s *SyncedChildren) remember(desired, live client.Object) {
	if s == nil || live.GetUID() == "" {
		return
	}
	s.cache().Add(live.GetUID(), synced{hash: desired.GetAnnotations()[HashAnnotation], version: versionOf(live)})
}

// versionOf is the version of what the operator owns in live: its
// generation for the kinds whose API server moves it at every spec change,
// else its resourceVersion.
func versionOf(live client.Object) string {
	switch live.(type) {
	case *appsv1.Deployment, *appsv1.StatefulSet:
		return "generation " + strconv.FormatInt(live.GetGeneration(), 10)
	}
	return "resourceVersion " + live.GetResourceVersion()
}

// metadataHolds tells whether live has every label and annotation of
// desired with its value, and every owner reference of desired (other
// owners may be there too): InSync's rules for metadata.
func metadataHolds(desired, live metav1.Object) bool {
	if !mapHolds(desired.GetLabels(), live.GetLabels()) || !mapHolds(desired.GetAnnotations(), live.GetAnnotations()) {
		return false
	}
	have := live.GetOwnerReferences()
	for _, want := range desired.GetOwnerReferences() {
		if !slices.ContainsFunc(have, func(h metav1.OwnerReference) bool { return ownerHolds(want, h) }) {
			return false
		}
	}
	return true
}

func mapHolds(want, have map[string]string) bool {
	for k, v := range want {
		if h, ok := have[k]; !ok || h != v {
			return false
		}
	}
	return true
}

// ownerHolds tells whether have is the owner reference want, in every
// field want sets.
func ownerHolds(want, have metav1.OwnerReference) bool {
	return want.APIVersion == have.APIVersion && want.Kind == have.Kind && want.Name == have.Name && want.UID == have.UID &&
		boolHolds(want.Controller, have.Controller) && boolHolds(want.BlockOwnerDeletion, have.BlockOwnerDeletion)
}

func boolHolds(want, have *bool) bool {
	return want == nil || (have != nil && *want == *have)
}
