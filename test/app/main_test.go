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
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// request sends one request to h and returns the status, body and
// X-App-Version header.
func request(t *testing.T, h http.Handler, method, target string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, string(body), rec.Header().Get("X-App-Version")
}

func TestEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name, method, target string
		notReady             bool
		status               int
		body                 string // exact; "": not checked
		wantExit             int    // -1: no exit
	}{
		{name: "version", method: http.MethodGet, target: "/", status: 200, body: "v1\n", wantExit: -1},
		{name: "version HEAD", method: http.MethodHead, target: "/", status: 200, wantExit: -1},
		{name: "version POST", method: http.MethodPost, target: "/", status: 405, wantExit: -1},
		{name: "unknown path", method: http.MethodGet, target: "/nope", status: 404, wantExit: -1},
		{name: "healthz", method: http.MethodGet, target: "/healthz", status: 200, body: "ok\n", wantExit: -1},
		{name: "healthz when not ready", method: http.MethodGet, target: "/healthz", notReady: true,
			status: 200, body: "ok\n", wantExit: -1},
		{name: "readyz", method: http.MethodGet, target: "/readyz", status: 200, body: "ready\n", wantExit: -1},
		{name: "readyz not ready", method: http.MethodGet, target: "/readyz", notReady: true,
			status: 503, body: "not ready\n", wantExit: -1},
		{name: "ready off", method: http.MethodPost, target: "/ready/off", status: 204, wantExit: -1},
		{name: "ready on", method: http.MethodPost, target: "/ready/on", notReady: true, status: 204, wantExit: -1},
		{name: "ready GET", method: http.MethodGet, target: "/ready/on", status: 405, wantExit: -1},
		{name: "ready bad state", method: http.MethodPost, target: "/ready/maybe", status: 404, wantExit: -1},
		{name: "exit", method: http.MethodPost, target: "/exit", status: 202, body: "exiting 0\n", wantExit: 0},
		{name: "exit code", method: http.MethodPost, target: "/exit?code=3", status: 202, body: "exiting 3\n",
			wantExit: 3},
		{name: "exit bad code", method: http.MethodPost, target: "/exit?code=x", status: 400, wantExit: -1},
		{name: "exit code too big", method: http.MethodPost, target: "/exit?code=256", status: 400, wantExit: -1},
		{name: "exit GET", method: http.MethodGet, target: "/exit", status: 405, wantExit: -1},
		{name: "burn", method: http.MethodGet, target: "/burn?ms=5", status: 200, body: "burned 5ms\n", wantExit: -1},
		{name: "burn bad", method: http.MethodGet, target: "/burn?ms=x", status: 400, wantExit: -1},
		{name: "burn negative", method: http.MethodGet, target: "/burn?ms=-1", status: 400, wantExit: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ready atomic.Bool
			ready.Store(!tc.notReady)
			exited := -1
			h := newHandler("v1", &ready, func(code int) { exited = code })
			status, body, hdr := request(t, h, tc.method, tc.target)
			if status != tc.status {
				t.Errorf("status %d, want %d (body %q)", status, tc.status, body)
			}
			if tc.body != "" && body != tc.body {
				t.Errorf("body %q, want %q", body, tc.body)
			}
			if hdr != "v1" {
				t.Errorf("X-App-Version %q, want v1", hdr)
			}
			if exited != tc.wantExit {
				t.Errorf("exit code %d, want %d (-1: no exit)", exited, tc.wantExit)
			}
		})
	}
}

func TestReadinessToggle(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	h := newHandler("v2", &ready, func(int) { t.Error("exit called") })
	for i, step := range []struct {
		method, target string
		status         int
	}{
		{http.MethodGet, "/readyz", 200},
		{http.MethodPost, "/ready/off", 204},
		{http.MethodGet, "/readyz", 503},
		{http.MethodGet, "/", 200}, // still serving while not ready
		{http.MethodGet, "/healthz", 200},
		{http.MethodPost, "/ready/off", 204}, // idempotent
		{http.MethodGet, "/readyz", 503},
		{http.MethodPost, "/ready/on", 204},
		{http.MethodGet, "/readyz", 200},
	} {
		if status, body, _ := request(t, h, step.method, step.target); status != step.status {
			t.Errorf("step %d: %s %s: %d %q, want %d", i, step.method, step.target, status, body, step.status)
		}
	}
	if !ready.Load() {
		t.Error("readiness off after POST /ready/on")
	}
}

func TestBurnDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"":                    defaultBurn,
		"0":                   0,
		"250":                 250 * time.Millisecond,
		"10000":               maxBurn,
		"10001":               maxBurn,
		"99999999999999999":   maxBurn,
		"9223372036854775807": maxBurn,
	} {
		if got, err := burnDuration(in); err != nil || got != want {
			t.Errorf("burnDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"x", "-5", "1.5", "99999999999999999999"} {
		if _, err := burnDuration(in); err == nil || !strings.Contains(err.Error(), "ms") {
			t.Errorf("burnDuration(%q): %v, want an error", in, err)
		}
	}
}
