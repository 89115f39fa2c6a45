package testutil

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
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
		[]byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"gb.1"},"regarding":{"kind":"Guestbook","name":"gb"}}`))
	// A series update names only the Event.
	w.count(http.MethodPatch, "/apis/events.k8s.io/v1/namespaces/default/events/gb.1", []byte(`{"series":{}}`))
	w.count(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/default/events",
		[]byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"other.1"},"regarding":{"kind":"Guestbook","name":"other"}}`))
	w.count(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/mine/events",
		[]byte(`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"web.1"},"regarding":{"kind":"Application","namespace":"mine","name":"web"}}`))

	// client-go sends built-in types as protobuf.
	event := &eventsv1.Event{
		TypeMeta:   metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{Name: "gb.2", Namespace: "default"},
		Regarding:  corev1.ObjectReference{Kind: "Guestbook", Name: "gb"},
	}
	var buf bytes.Buffer
	g := gomega.NewWithT(t)
	g.Expect(protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(event, &buf)).To(gomega.Succeed())
	w.count(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/default/events", buf.Bytes())

	g.Expect(w.Total()).To(gomega.Equal(9))
	mine := w.In(InNamespace("mine"))
	g.Expect(mine.Total()).To(gomega.Equal(2), "namespace mine:\n%s", mine)
	gb := w.In(ClusterObject("guestbooks", "Guestbook", "gb"))
	g.Expect(gb.Total()).To(gomega.Equal(4), "guestbook gb:\n%s", gb)
	g.Expect(gb.Drain()).To(gomega.Equal(4))
	g.Expect(gb.Total()).To(gomega.BeZero(), "after Drain")
	g.Expect(w.Total()).To(gomega.Equal(5), "the others' writes are kept")
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
