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

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestGracefulShutdownEndsInsideThePodsGracePeriod: the manager gives up
// waiting for its runnables, releases the Lease and exits at least 2 s
// before the kubelet would kill it, in both shipped Deployments.
func TestGracefulShutdownEndsInsideThePodsGracePeriod(t *testing.T) {
	grace := regexp.MustCompile(`(?m)^\s*terminationGracePeriodSeconds:\s*(\d+)\s*$`)
	for _, file := range []string{"config/manager/manager.yaml", "dist/chart/templates/deployment.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatal(err)
		}
		m := grace.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s: no terminationGracePeriodSeconds", file)
		}
		seconds, err := strconv.Atoi(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		if limit := time.Duration(seconds)*time.Second - 2*time.Second; defaultGracefulShutdownTimeout > limit {
			t.Errorf("%s: terminationGracePeriodSeconds %d leaves less than 2 s after --graceful-shutdown-timeout's default %s",
				file, seconds, defaultGracefulShutdownTimeout)
		}
	}
}
