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
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// LazyWatch is a watch a controller starts the first time a reconcile needs
// it, not when the manager starts. The Pod watch is one: it costs every Pod
// event of the cluster (the API server's fan-out to one more watcher, the
// manager's decoding and its cache) and only MyCustomResource and Guestbook
// read Pods, so an operator that serves only Applications never opens it
// (a burst of Applications brings several Pod events per Application:
// docs/performance.md).
//
// Hand-written because controller-runtime has no lazily started source; it
// builds on what it does have: Controller.Watch on a running controller
// starts the source at once, and the informer behind it sends an add event
// for every object it lists first, so nothing that happened before the
// watch started is missed. Call Start before reading what it watches: a
// change after that read then has its event.
type LazyWatch struct {
	ctrl controller.Controller
	// what names the watched objects, for errors.
	what string
	// source makes the source; a source starts only once, so a failed
	// start is retried with a new one.
	source  func() source.Source
	mu      sync.Mutex
	started atomic.Bool
}

// NewLazyWatch returns the watch that newSource makes, for c, not started.
func NewLazyWatch(c controller.Controller, what string, newSource func() source.Source) *LazyWatch {
	return &LazyWatch{ctrl: c, what: what, source: newSource}
}

// NewPodWatch returns the lazy watch of Pods, as metadata only (the cache
// keeps them so: PodMetadataTransform), whose events map to requests
// through toRequests.
func NewPodWatch(c controller.Controller, informers cache.Cache, toRequests handler.MapFunc) *LazyWatch {
	return NewLazyWatch(c, "Pods", func() source.Source {
		pod := &metav1.PartialObjectMetadata{}
		pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		return source.Kind[client.Object](informers, pod, handler.EnqueueRequestsFromMapFunc(toRequests))
	})
}

// Start starts the watch unless it has started already. It returns at
// once: the informer lists and syncs in the background, and a read from
// the cache waits for it.
func (w *LazyWatch) Start() error {
	if w.started.Load() {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started.Load() {
		return nil
	}
	if err := w.ctrl.Watch(w.source()); err != nil {
		return fmt.Errorf("starting the watch of %s: %w", w.what, err)
	}
	w.started.Store(true)
	return nil
}

// Started tells whether the watch has started.
func (w *LazyWatch) Started() bool { return w.started.Load() }
