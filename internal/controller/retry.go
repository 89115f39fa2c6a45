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

// Package controller holds what the operator's controllers share.
package controller

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Retry limits of every controller: a failed reconcile is retried after
// 5 ms, doubling up to 1000 s per object (controller-runtime's default), and
// all retries of a controller together are held to RetryQPS after a burst of
// RetryBurst. controller-runtime's priority queue drops that overall limit;
// without it, when the API server goes away, every object in flight retries
// ~8 times in its first second and a large backlog floods the server as it
// comes back. Only retries are limited: events are queued at once.
const (
	RetryQPS   = 10
	RetryBurst = 100
)

// Options returns the controller options every controller of the operator
// is built with.
func Options() controller.Options {
	return controller.Options{
		RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, 1000*time.Second),
			&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(RetryQPS), RetryBurst)},
		),
	}
}
