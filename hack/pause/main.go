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

// Command pause is the pod sandbox ("pause") image of the local test
// cluster's real kubelet node: registry.k8s.io/pause cannot be pulled here
// (no registry is reachable), so `make test-images` packs this program as
// sunstrider.local/pause:1 (hack/image -entrypoint /pause) and the node's
// containerd is configured to use it as its sandbox image.
//
// Like Kubernetes' pause it holds the pod's namespaces open by doing nothing:
// it blocks until SIGTERM or SIGINT, then exits 0, and, being PID 1 of a pod
// that shares its process namespace, reaps the orphans reparented to it on
// SIGCHLD.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			fmt.Printf("pause: %v: exiting\n", sig)
			return
		}
		for { // reap every exited child: signals coalesce
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
