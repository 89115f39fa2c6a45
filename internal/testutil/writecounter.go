package testutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// WriteCounter counts the mutating requests (POST, PUT, PATCH, DELETE) sent
// through a rest.Config, so tests can prove a controller is quiet at steady
// state. In selects the writes of one test's objects (its namespace, its
// cluster-scoped objects), so that what other tests left behind cannot
// make a test fail or pass.
type WriteCounter struct {
	mu     sync.Mutex
	writes map[Write]int
	// eventRegarding remembers what each Event created through the counter
	// is about: a later PATCH of the Event (a series) names only the Event.
	eventRegarding map[string]ObjectRef
}

// Write is one kind of API write: its method and path, and where the
// object written lives.
type Write struct {
	Method, Path string
	// Namespace is empty for a cluster-scoped object. Name is the object's
	// (for a POST, the name in the body). Subresource is "status", "scale"…
	Namespace, Resource, Name, Subresource string
	// Regarding is the object an Event is about, for a write of an Event.
	Regarding ObjectRef
}

// eventsResource is the resource of Events in API paths (core and
// events.k8s.io).
const eventsResource = "events"

// ObjectRef names an object.
type ObjectRef struct{ Kind, Namespace, Name string }

// NewWriteCounter returns an empty counter.
func NewWriteCounter() *WriteCounter {
	return &WriteCounter{writes: map[Write]int{}, eventRegarding: map[string]ObjectRef{}}
}

// Wrap returns a copy of cfg whose requests are counted.
func (w *WriteCounter) Wrap(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
				var body []byte
				body, req = readBody(req)
				w.count(req.Method, req.URL.Path, body)
			}
			return rt.RoundTrip(req)
		})
	})
	return out
}

// readBody returns the body of req and a request to send in its place
// (req itself when its body can be read again).
func readBody(req *http.Request) ([]byte, *http.Request) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, req
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			defer func() { _ = rc.Close() }()
			data, _ := io.ReadAll(rc)
			return data, req
		}
	}
	data, _ := io.ReadAll(req.Body)
	_ = req.Body.Close()
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(data))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return data, out
}

// count records one write of path with body.
func (w *WriteCounter) count(method, path string, body []byte) {
	wr := locate(method, path)
	name, regarding := readObject(body)
	if wr.Name == "" && method == http.MethodPost {
		wr.Name = name
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr.Resource == eventsResource {
		key := wr.Namespace + "/" + wr.Name
		if regarding != nil {
			w.eventRegarding[key] = *regarding
		}
		wr.Regarding = w.eventRegarding[key]
	}
	w.writes[wr]++
}

// readObject reads the name of the object in a request body and, for an
// Event, the object it is about. Built-in types may come as protobuf.
func readObject(body []byte) (string, *ObjectRef) {
	if len(body) == 0 {
		return "", nil
	}
	if obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
		var name string
		if m, err := meta.Accessor(obj); err == nil {
			name = m.GetName()
		}
		switch e := obj.(type) {
		case *eventsv1.Event:
			return name, &ObjectRef{Kind: e.Regarding.Kind, Namespace: e.Regarding.Namespace, Name: e.Regarding.Name}
		case *corev1.Event:
			return name, &ObjectRef{Kind: e.InvolvedObject.Kind, Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name}
		}
		return name, nil
	}
	// A custom resource, or a patch.
	var object struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	_ = json.Unmarshal(body, &object)
	return object.Metadata.Name, nil
}

// locate reads where the object of an API path lives: /api/v1/… or
// /apis/<group>/<version>/…, then [namespaces/<ns>/]<resource>[/<name>[/<subresource>]].
func locate(method, path string) Write {
	wr := Write{Method: method, Path: path}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return wr
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		wr.Namespace, parts = parts[1], parts[2:]
	}
	for i, p := range []*string{&wr.Resource, &wr.Name, &wr.Subresource} {
		if i < len(parts) {
			*p = parts[i]
		}
	}
	return wr
}

// Scope selects writes: those of one test's objects.
type Scope func(Write) bool

// InNamespace selects the writes of objects in namespace ns, the Events
// about them included.
func InNamespace(ns string) Scope {
	return func(w Write) bool { return w.Namespace == ns }
}

// ClusterObject selects the writes of the cluster-scoped object of kind
// (resource, such as "guestbooks", in paths) named name, and of the Events
// about it (which live in the default namespace).
func ClusterObject(resource, kind, name string) Scope {
	return func(w Write) bool {
		if w.Resource == eventsResource {
			return w.Regarding == ObjectRef{Kind: kind, Name: name}
		}
		return w.Namespace == "" && w.Resource == resource && w.Name == name
	}
}

// In returns a view of the writes matching any of scopes.
func (w *WriteCounter) In(scopes ...Scope) *WriteView {
	return &WriteView{counter: w, match: func(wr Write) bool {
		return slices.ContainsFunc(scopes, func(s Scope) bool { return s(wr) })
	}}
}

// all is the view of every write.
func (w *WriteCounter) all() *WriteView {
	return &WriteView{counter: w, match: func(Write) bool { return true }}
}

// Reset forgets every counted write.
func (w *WriteCounter) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = map[Write]int{}
}

// Drain returns the number of writes counted since the last Reset or
// Drain, and forgets them; see WriteView.Drain.
func (w *WriteCounter) Drain() int { return w.all().Drain() }

// Total returns the number of writes counted since the last Reset.
func (w *WriteCounter) Total() int { return w.all().Total() }

// String lists the counted writes, one "METHOD path xN" per line.
func (w *WriteCounter) String() string { return w.all().String() }

// WriteView is the part of a WriteCounter's writes that a Scope selects.
type WriteView struct {
	counter *WriteCounter
	match   func(Write) bool
}

// Drain returns the number of the view's writes counted since the last
// Drain, and forgets them. Polled every second until it returns 0, it waits
// for a controller to settle: the last writes of a convergence (such as a
// status write racing the controller's own cache, refused with a Conflict)
// may come just after the state a test waits for is visible.
func (v *WriteView) Drain() int {
	v.counter.mu.Lock()
	defer v.counter.mu.Unlock()
	n := v.total()
	maps.DeleteFunc(v.counter.writes, func(wr Write, _ int) bool { return v.match(wr) })
	return n
}

// Total returns the number of the view's writes.
func (v *WriteView) Total() int {
	v.counter.mu.Lock()
	defer v.counter.mu.Unlock()
	return v.total()
}

// total sums the view's writes; the counter's mu is held.
func (v *WriteView) total() int {
	n := 0
	for wr, c := range v.counter.writes {
		if v.match(wr) {
			n += c
		}
	}
	return n
}

// String lists the view's writes, one "METHOD path xN" per line (Events
// with the object they are about).
func (v *WriteView) String() string {
	v.counter.mu.Lock()
	defer v.counter.mu.Unlock()
	byPath := map[string]int{}
	for wr, c := range v.counter.writes {
		if !v.match(wr) {
			continue
		}
		key := wr.Method + " " + wr.Path
		if wr.Resource == eventsResource {
			key += fmt.Sprintf(" (about %s %s/%s)", wr.Regarding.Kind, wr.Regarding.Namespace, wr.Regarding.Name)
		}
		byPath[key] += c
	}
	lines := make([]string, 0, len(byPath))
	for k, c := range byPath {
		lines = append(lines, fmt.Sprintf("%s x%d", k, c))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// RoundTripperFunc is a function as an http.RoundTripper: what a test
// wraps a rest.Config's transport with (rest.Config.Wrap) to see its
// requests.
type RoundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
