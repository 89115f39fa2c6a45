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

package machinery

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MemoizeMappings wraps mapper so that its answer to RESTMapping for one
// kind in one named version is computed once. The other calls, and a
// RESTMapping without exactly one version (the preferred version, which
// changes as versions are served), go to mapper.
//
// Why hand-written: Owns (controller-runtime's EnqueueRequestForOwner) asks
// the manager's RESTMapper for the owner's scope at every event of every
// child. controller-runtime's dynamic mapper answers through client-go's
// PriorityRESTMapper and MultiRESTMapper, which build the answer again each
// time: in a burst of Applications that showed in the manager's CPU and
// allocation profiles (docs/performance.md), for an answer that does not
// change. Neither library caches it. What a mapping says (the resource
// and the scope) is fixed for a kind's version: a CRD's plural is part of
// its name and its scope is immutable, and the built-in kinds do not move.
// Errors are not remembered: a kind not yet installed is found when it is.
func MemoizeMappings(mapper meta.RESTMapper) meta.RESTMapper {
	return &memoMapper{RESTMapper: mapper}
}

type memoMapper struct {
	meta.RESTMapper
	// mappings holds a *meta.RESTMapping per schema.GroupVersionKind.
	mappings sync.Map
}

// RESTMapping returns a copy of the remembered mapping, so that a caller
// that changes it changes no one else's.
func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 || versions[0] == "" {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	key := gk.WithVersion(versions[0])
	if known, ok := m.mappings.Load(key); ok {
		mapping := *known.(*meta.RESTMapping)
		return &mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	known := *mapping
	m.mappings.Store(key, &known)
	return mapping, nil
}
