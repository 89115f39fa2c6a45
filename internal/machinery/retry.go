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

package machinery

import (
	"time"

	"golang.org/x/time/rate"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Retry limits of every controller (Options).
const (
	// RetryBaseDelay is an object's first retry delay, doubling per
	// failure up to RetryMaxDelay.
	RetryBaseDelay = 5 * time.Millisecond
	RetryMaxDelay  = 1000 * time.Second
	// RetryRate and RetryBurst hold all retries of a controller together.
	RetryRate  = 10
	RetryBurst = 20
)

// Options returns the controller options every controller of the operator
// is built with. A failed reconcile is retried after 5 ms, doubling up to
// 1000 s per object, and all retries of a controller together are held to
// 10/s after a burst of 20: client-go's controller rate limiter, set
// explicitly because controller-runtime's priority queue otherwise keeps
// only the per-object backoff. Without the overall limit, when the API
// server goes away, every object in flight retries several times in its
// first second and a large backlog floods the server as it comes back.
//
// The burst is 20, not client-go's default 100: during an outage a
// reconcile that needs no request (all it reads is cached, its status
// write put off) succeeds and resets its object's backoff, so its next
// failure starts at 5 ms again. Objects whose put-off status falls due
// together then retry several times each within a second; with a burst of
// 100 the chaos suite measured a flood of requests in such a second
// (docs/reliability.md has the figures). Outside an outage few reconciles
// fail (a status conflict is not a failure: its object's next event
// retries it), so 20 at once and 10/s after is ample.
// Only retries are limited: events are queued at once.
func Options() controller.Options {
	return controller.Options{
		RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](RetryBaseDelay, RetryMaxDelay),
			&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(RetryRate), RetryBurst)},
		),
	}
}

// OrDefault returns d, or def when d is zero.
func OrDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
