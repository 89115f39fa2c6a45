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

// Command app is the project's own test workload for the real kubelet node of
// the local test cluster. No registry can be reached here, so no image can be
// pulled: `make test-images` builds this program into
// sunstrider.local/testapp:v1 and :v2 (hack/image, FROM scratch), which are
// imported into the node's containerd. It is a small HTTP server whose
// behaviour the tests steer: its version (to tell a rollout's old Pods from
// its new ones), readiness turned off and on at run time, exits on request,
// a crash loop, CPU burnt on request, and a graceful drain on SIGTERM.
//
// Endpoints (every response carries X-App-Version):
//
//	GET  /            200, the version and a newline, e.g. "v1\n"
//	GET  /healthz     200 "ok\n" (liveness)
//	GET  /readyz      200 "ready\n" when ready, 503 "not ready\n" when not
//	POST /ready/off   204, readiness off
//	POST /ready/on    204, readiness on
//	POST /exit?code=N 202, then the process exits with code N (default 0)
//	GET  /burn?ms=N   busy-loops a CPU for N ms (default 100, at most 10000), then 200
//
// On SIGTERM or SIGINT it turns readiness off, keeps serving for -drain (with
// keep-alives off, so clients reconnect elsewhere) while the endpoints catch
// up, then shuts down gracefully and exits 0: a rollout of it can lose no
// request. It logs one line to stdout per start or stop event, none per
// request.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// version is set at build time: -ldflags "-X main.version=v1".
var version = "dev"

const (
	defaultBurn = 100 * time.Millisecond
	maxBurn     = 10 * time.Second
	// shutdownTimeout bounds the wait for in-flight requests at the end.
	shutdownTimeout = 10 * time.Second
)

func main() {
	// :3000 too: a Guestbook instance's port (internal/controller/webapp),
	// so that this image serves as the Guestbook's (OperatorConfiguration
	// guestbookImage) on the real node.
	listen := flag.String("listen", ":8080,:3000", "comma-separated addresses to serve HTTP on")
	crash := flag.Bool("crash", false, "print a line to stderr and exit 1 at once (a crash-looping container)")
	exitAfter := flag.Duration("exit-after", 0, "exit 0 after this long (0: never)")
	notReady := flag.Bool("not-ready", false, "start with readiness off (/readyz 503 until POST /ready/on)")
	drain := flag.Duration("drain", 2*time.Second,
		"on SIGTERM/SIGINT, keep serving this long with readiness off before shutting down")
	flag.Parse()

	if *crash {
		fmt.Fprintf(os.Stderr, "testapp %s: -crash: exiting 1\n", version)
		os.Exit(1)
	}
	os.Exit(run(*listen, *exitAfter, *drain, !*notReady))
}

// run serves until a signal, -exit-after or POST /exit and returns the exit code.
func run(listen string, exitAfter, drain time.Duration, ready bool) int {
	logger := log.New(os.Stdout, "testapp: ", log.LstdFlags|log.LUTC)
	var readiness atomic.Bool
	readiness.Store(ready)
	exits := make(chan int, 1)
	srv := &http.Server{
		Handler: newHandler(version, &readiness, func(code int) {
			select {
			case exits <- code:
			default: // an exit is already under way
			}
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	addrs := strings.Split(listen, ",")
	serveErr := make(chan error, len(addrs))
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			logger.Printf("%s: %v", version, err)
			return 1
		}
		go func() { serveErr <- srv.Serve(ln) }()
	}
	logger.Printf("%s listening on %s (ready=%t, drain=%s, exit-after=%s)", version, listen, ready, drain, exitAfter)

	var timeout <-chan time.Time
	if exitAfter > 0 {
		timeout = time.After(exitAfter)
	}
	code := 0
	select {
	case sig := <-signals:
		readiness.Store(false)
		srv.SetKeepAlivesEnabled(false)
		logger.Printf("%s: %v: readiness off, draining for %s", version, sig, drain)
		time.Sleep(drain)
	case <-timeout:
		logger.Printf("%s: -exit-after %s elapsed: exiting 0", version, exitAfter)
	case code = <-exits:
		logger.Printf("%s: POST /exit: exiting %d", version, code)
	case err := <-serveErr:
		logger.Printf("%s: serve: %v", version, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Printf("%s: shutdown: %v", version, err)
		return 1
	}
	for range addrs {
		if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
			logger.Printf("%s: serve: %v", version, err)
		}
	}
	logger.Printf("%s stopped, exit code %d", version, code)
	return code
}

// newHandler serves the endpoints; ready is the readiness /readyz reports
// and /ready/{on,off} set, exit is called with the code after POST /exit's
// response is written.
func newHandler(appVersion string, ready *atomic.Bool, exit func(code int)) http.Handler {
	mux := http.NewServeMux()
	text := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = fmt.Fprint(w, body)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		text(w, http.StatusOK, appVersion+"\n")
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		text(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready.Load() {
			text(w, http.StatusOK, "ready\n")
			return
		}
		text(w, http.StatusServiceUnavailable, "not ready\n")
	})
	mux.HandleFunc("POST /ready/{state}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("state") {
		case "on":
			ready.Store(true)
		case "off":
			ready.Store(false)
		default:
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /exit", func(w http.ResponseWriter, r *http.Request) {
		code := 0
		if s := r.URL.Query().Get("code"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > 255 {
				text(w, http.StatusBadRequest, "code: want an integer from 0 to 255\n")
				return
			}
			code = n
		}
		text(w, http.StatusAccepted, fmt.Sprintf("exiting %d\n", code))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		exit(code)
	})
	mux.HandleFunc("GET /burn", func(w http.ResponseWriter, r *http.Request) {
		d, err := burnDuration(r.URL.Query().Get("ms"))
		if err != nil {
			text(w, http.StatusBadRequest, err.Error()+"\n")
			return
		}
		start := time.Now()
		for time.Since(start) < d && r.Context().Err() == nil {
			// Busy: the point is the CPU time.
		}
		text(w, http.StatusOK, fmt.Sprintf("burned %dms\n", d.Milliseconds()))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-App-Version", appVersion)
		mux.ServeHTTP(w, r)
	})
}

// burnDuration reads /burn's ms: empty for the default, capped at maxBurn.
func burnDuration(ms string) (time.Duration, error) {
	if ms == "" {
		return defaultBurn, nil
	}
	n, err := strconv.Atoi(ms)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("ms %q: want a non-negative integer", ms)
	}
	return time.Duration(min(n, int(maxBurn/time.Millisecond))) * time.Millisecond, nil
}
