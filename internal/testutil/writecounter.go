package testutil

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// WriteCounter counts the mutating requests (POST, PUT, PATCH, DELETE) sent
// through a rest.Config, so tests can prove a controller is quiet at steady
// state.
type WriteCounter struct {
	mu     sync.Mutex
	writes map[string]int
}

// NewWriteCounter returns an empty counter.
func NewWriteCounter() *WriteCounter {
	return &WriteCounter{writes: map[string]int{}}
}

// Wrap returns a copy of cfg whose requests are counted.
func (w *WriteCounter) Wrap(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
				w.mu.Lock()
				w.writes[req.Method+" "+req.URL.Path]++
				w.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return out
}

// Reset forgets every counted write.
func (w *WriteCounter) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = map[string]int{}
}

// Drain returns the number of writes counted since the last Reset or
// Drain, and forgets them. Polled every second until it returns 0, it waits
// for a controller to settle: the last writes of a convergence (such as a
// status write racing the controller's own cache, refused with a Conflict)
// may come just after the state a test waits for is visible.
func (w *WriteCounter) Drain() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.total()
	w.writes = map[string]int{}
	return n
}

// Total returns the number of writes counted since the last Reset.
func (w *WriteCounter) Total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total()
}

// total sums the counted writes; w.mu is held.
func (w *WriteCounter) total() int {
	n := 0
	for _, c := range w.writes {
		n += c
	}
	return n
}

// String lists the counted writes, one "METHOD path xN" per line.
func (w *WriteCounter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := make([]string, 0, len(w.writes))
	for k, c := range w.writes {
		lines = append(lines, fmt.Sprintf("%s x%d", k, c))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
