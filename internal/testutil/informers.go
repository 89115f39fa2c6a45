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

package testutil

import (
	"reflect"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// InformerLog records the kinds of the informers a manager's cache makes,
// in order. Its NewInformer goes in cache.Options.NewInformer, the one
// constructor every informer of the cache comes from, whether a watch or a
// cached read asked for it.
type InformerLog struct {
	mu    sync.Mutex
	kinds []string
}

// NewInformer records obj's kind and makes the informer as the cache
// would.
func (l *InformerLog) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if _, metadata := obj.(*metav1.PartialObjectMetadata); !metadata || kind == "" {
		kind = reflect.TypeOf(obj).Elem().Name()
	}
	l.mu.Lock()
	l.kinds = append(l.kinds, kind)
	l.mu.Unlock()
	return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
}

// Kinds returns the kinds of the informers made so far, in order: a
// metadata informer by the kind it holds (Pod), the others by their Go
// type's name.
func (l *InformerLog) Kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.kinds)
}
