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

import "k8s.io/client-go/rest"

// APIClient is how the manager talks to the API server: its rate limits
// and whether it asks for compressed responses.
type APIClient struct {
	// QPS and Burst are client-go's client-side rate limit; a negative QPS
	// turns it off.
	QPS   float32
	Burst int
	// Compression asks the API server to gzip its responses. Off, the
	// manager's requests carry no Accept-Encoding: gzip, as
	// kube-controller-manager's and kube-scheduler's do not. Since
	// Kubernetes 1.37 (WatchListCompression) the API server gzips a watch
	// that starts with a list, which is how client-go's informers watch, for
	// the watch's whole life, separately for each watcher: every event the
	// manager's caches receive was compressed by kube-apiserver and
	// decompressed by the manager, CPU on both sides to save bandwidth on
	// the cluster's own network (docs/performance.md).
	Compression bool
}

// Config returns a copy of base that talks to the API server as c says. A
// base that already turns compression off (a kubeconfig's
// disable-compression) keeps it off.
func (c APIClient) Config(base *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.QPS = c.QPS
	cfg.Burst = c.Burst
	cfg.DisableCompression = base.DisableCompression || !c.Compression
	return cfg
}
