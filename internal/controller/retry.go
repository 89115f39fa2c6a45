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
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Options returns the controller options every controller of the operator
// is built with. A failed reconcile is retried after 5 ms, doubling up to
// 1000 s per object, and all retries of a controller together are held to
// 10/s after a burst of 100: client-go's default controller rate limiter,
// set explicitly because controller-runtime's priority queue otherwise
// keeps only the per-object backoff. Without the overall limit, when the
// API server goes away, every object in flight retries ~8 times in its
// first second and a large backlog floods the server as it comes back.
// Only retries are limited: events are queued at once.
func Options() controller.Options {
	return controller.Options{
		RateLimiter: workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
	}
}

// OrDefault returns d, or def when d is zero.
func OrDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
