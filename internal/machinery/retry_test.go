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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestOptionsRetryLimits: objects failing together (their first failure
// each) are retried at once up to the burst, then at the overall rate; one
// object failing again and again backs off per object.
func TestOptionsRetryLimits(t *testing.T) {
	rl := Options().RateLimiter
	req := func(i int) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("o-%d", i)}}
	}
	// 40 objects fail at once, 8 times each in a row (what 5 ms doubling
	// asks within ~1.3 s): the delays handed out cover at least
	// (320 - burst) / rate seconds.
	const objects, failures = 40, 8
	var longest time.Duration
	for range failures {
		for i := range objects {
			longest = max(longest, rl.When(req(i)))
		}
	}
	want := time.Duration(float64(objects*failures-RetryBurst)/RetryRate*float64(time.Second)) - time.Second
	if longest < want {
		t.Errorf("%d retries at once: the last waits %s, want at least %s (burst %d, then %d/s)",
			objects*failures, longest, want, RetryBurst, RetryRate)
	}

	// One object alone: 5 ms, doubling, as long as the bucket has tokens.
	rl = Options().RateLimiter
	for n, want := range []time.Duration{5, 10, 20, 40, 80} {
		if got := rl.When(req(0)); got != want*time.Millisecond {
			t.Errorf("failure %d of one object: retried after %s, want %s", n+1, got, want*time.Millisecond)
		}
	}
	if got := rl.NumRequeues(req(0)); got != 5 {
		t.Errorf("requeues of one object: %d, want 5", got)
	}
	rl.Forget(req(0))
	if got := rl.When(req(0)); got != RetryBaseDelay {
		t.Errorf("after Forget: retried after %s, want %s", got, RetryBaseDelay)
	}
}
