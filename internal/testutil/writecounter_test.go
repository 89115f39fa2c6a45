package testutil

import (
	"net/http"
	"testing"
)

func TestLocate(t *testing.T) {
	for _, tt := range []struct {
		path string
		want Write
	}{
		{"/api/v1/namespaces/ns1/configmaps", Write{Namespace: "ns1", Resource: "configmaps"}},
		{"/api/v1/namespaces/ns1/services/web", Write{Namespace: "ns1", Resource: "services", Name: "web"}},
		{"/apis/apps/v1/namespaces/ns1/deployments/web/scale",
			Write{Namespace: "ns1", Resource: "deployments", Name: "web", Subresource: "scale"}},
		{"/apis/webapp.my.domain/v1/guestbooks/gb/status", Write{Resource: "guestbooks", Name: "gb", Subresource: "status"}},
		{"/api/v1/namespaces/ns1", Write{Resource: "namespaces", Name: "ns1"}},
		{"/apis/events.k8s.io/v1/namespaces/default/events", Write{Namespace: "default", Resource: "events"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			got := locate(http.MethodPatch, tt.path)
			tt.want.Method, tt.want.Path = http.MethodPatch, tt.path
			if got != tt.want {
				t.Errorf("locate(%q) = %+v, want %+v", tt.path, got, tt.want)
			}
		})
	}
}

func TestWriteViews(t *testing.T) {
	w := NewWriteCounter()
	w.count(http.MethodPatch, "/apis/apps/v1/namespaces/mine/deployments/web", nil)
	w.count(http.MethodPatch, "/apis/apps/v1/namespaces/theirs/deployments/web", nil)
	w.count(http.MethodPatch, "/apis/webapp.my.domain/v1/guestbooks/gb/status", nil)
	w.count(http.MethodPatch, "/apis/webapp.my.domain/v1/guestbooks/other/status", nil)
	w.count(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/default/events",
		[]byte(`{"metadata":{"name":"gb.1"},"regarding":{"kind":"Guestbook","name":"gb"}}`))
	// A series update names only the Event.
	w.count(http.MethodPatch, "/apis/events.k8s.io/v1/namespaces/default/events/gb.1", []byte(`{"series":{}}`))
	w.count(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/default/events",
		[]byte(`{"metadata":{"name":"other.1"},"regarding":{"kind":"Guestbook","name":"other"}}`))
	w.count(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/mine/events",
		[]byte(`{"metadata":{"name":"web.1"},"regarding":{"kind":"Application","namespace":"mine","name":"web"}}`))

	if got := w.Total(); got != 8 {
		t.Errorf("Total() = %d, want 8", got)
	}
	mine := w.In(InNamespace("mine"))
	if got := mine.Total(); got != 2 {
		t.Errorf("namespace mine: %d writes, want 2:\n%s", got, mine)
	}
	gb := w.In(ClusterObject("guestbooks", "Guestbook", "gb"))
	if got := gb.Total(); got != 3 {
		t.Errorf("guestbook gb: %d writes, want 3:\n%s", got, gb)
	}
	if got := gb.Drain(); got != 3 {
		t.Errorf("guestbook gb drained %d writes, want 3", got)
	}
	if got := gb.Total(); got != 0 {
		t.Errorf("guestbook gb after Drain: %d writes, want 0", got)
	}
	if got := w.Total(); got != 5 {
		t.Errorf("Total() after draining gb = %d, want 5 (the others' writes kept)", got)
	}
}

func TestReconcileEnds(t *testing.T) {
	for msg, want := range map[string]bool{
		"Reconcile successful":                   true,
		"Reconcile done, requeueing":             true,
		"Reconcile done, requeueing after 30s":   true,
		"Reconciling":                            false,
		"Reconcile done, requeueing after ":      false,
		"Reconcile successful, but not the same": false,
	} {
		if got := isReconcileEnd(msg); got != want {
			t.Errorf("isReconcileEnd(%q) = %v, want %v", msg, got, want)
		}
	}
}
