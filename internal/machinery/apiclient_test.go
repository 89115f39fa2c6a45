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

package machinery_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/machinery"
	"sunstrider.cn/operator/internal/testutil"
)

func TestAPIClientConfig(t *testing.T) {
	for _, tc := range []struct {
		name         string
		client       machinery.APIClient
		baseDisables bool
		wantDisabled bool
	}{
		{name: "off by default", client: machinery.APIClient{QPS: 5, Burst: 10}, wantDisabled: true},
		{name: "asked for", client: machinery.APIClient{QPS: 5, Burst: 10, Compression: true}, wantDisabled: false},
		{name: "the kubeconfig's disable-compression wins", client: machinery.APIClient{QPS: 5, Burst: 10, Compression: true},
			baseDisables: true, wantDisabled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &rest.Config{Host: "https://example.invalid", DisableCompression: tc.baseDisables}
			cfg := tc.client.Config(base)
			if cfg.DisableCompression != tc.wantDisabled || cfg.QPS != 5 || cfg.Burst != 10 {
				t.Errorf("got DisableCompression %v, QPS %v, Burst %d; want %v, 5, 10",
					cfg.DisableCompression, cfg.QPS, cfg.Burst, tc.wantDisabled)
			}
			if base.QPS != 0 || base.DisableCompression != tc.baseDisables {
				t.Error("Config changed its base")
			}
		})
	}
}

// TestAPIClientWatchesUncompressed: a controller-runtime cache built on the
// manager's APIClient receives its watches as the API server encodes them,
// not gzipped. The same cache asking for compression gets its watch-list
// gzipped by this API server, which shows the first half could fail.
func TestAPIClientWatchesUncompressed(t *testing.T) {
	env, err := testutil.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testutil.Start(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "listed", Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		compression bool
		wantGzipped bool
	}{{compression: false, wantGzipped: false}, {compression: true, wantGzipped: true}} {
		watches, gzipped := cacheWatches(ctx, t, machinery.APIClient{QPS: -1, Compression: tc.compression}.Config(cfg))
		if watches == 0 {
			t.Fatalf("compression %v: the cache synced without a watch", tc.compression)
		}
		if (gzipped > 0) != tc.wantGzipped {
			t.Errorf("compression %v: %d of %d watches gzipped", tc.compression, gzipped, watches)
		}
	}
}

// cacheWatches starts a cache of ConfigMaps on cfg, waits for its sync and
// returns how many watch responses it got and how many of them the API
// server gzipped.
func cacheWatches(ctx context.Context, t *testing.T, cfg *rest.Config) (watches, gzipped int) {
	t.Helper()
	var mu sync.Mutex
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return testutil.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil && req.URL.Query().Get("watch") == "true" {
				mu.Lock()
				watches++
				// Go's transport unzips transparently and says so.
				if resp.Uncompressed || resp.Header.Get("Content-Encoding") == "gzip" {
					gzipped++
				}
				mu.Unlock()
			}
			return resp, err
		})
	})
	ca, err := cache.New(cfg, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if _, err := ca.GetInformer(cctx, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = ca.Start(cctx) }()
	if !ca.WaitForCacheSync(cctx) {
		t.Fatal("the cache did not sync")
	}
	mu.Lock()
	defer mu.Unlock()
	return watches, gzipped
}
