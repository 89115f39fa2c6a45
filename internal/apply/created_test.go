package apply

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestCreatedChildren: a child is vouched for from its create until the
// cache holds it, CreatedTTL at most, and its copy is the caller's own; a
// nil memory remembers nothing.
func TestCreatedChildren(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("Service")
	other := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "u1"}}
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)

	for _, c := range []struct {
		name string
		// after is how long after the create get is asked; seen, whether
		// the cache held the child meanwhile.
		after    time.Duration
		seen     bool
		kind     bool // ask for another kind of the same name
		wantOK   bool
		wantLeft time.Duration
		wantLen  int
	}{
		{name: "at once", after: 0, wantOK: true, wantLeft: CreatedTTL, wantLen: 1},
		{name: "a second later", after: time.Second, wantOK: true, wantLeft: CreatedTTL - time.Second, wantLen: 1},
		{name: "at the TTL: forgotten", after: CreatedTTL, wantOK: false, wantLen: 0},
		{name: "the cache held it", after: time.Second, seen: true, wantOK: false, wantLen: 0},
		{name: "another kind of the name", after: 0, kind: true, wantOK: false, wantLen: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := start
			created := &CreatedChildren{now: func() time.Time { return now }}
			created.remember(gvk, svc)
			now = now.Add(c.after)
			if c.seen {
				created.seen(gvk, key)
			}
			ask := gvk
			if c.kind {
				ask = other
			}
			obj, left, ok := created.get(ask, key)
			if ok != c.wantOK || left != c.wantLeft {
				t.Fatalf("get = %v, %v; want %v, %v", ok, left, c.wantOK, c.wantLeft)
			}
			if created.Len() != c.wantLen {
				t.Errorf("Len = %d, want %d", created.Len(), c.wantLen)
			}
			if c.wantLen == 0 && created.objects != nil {
				t.Error("the map stays after its last entry")
			}
			if !ok {
				return
			}
			if obj.GetUID() != svc.UID {
				t.Errorf("got UID %q, want %q", obj.GetUID(), svc.UID)
			}
			obj.SetLabels(map[string]string{"changed": "by the caller"})
			again, _, _ := created.get(gvk, key)
			if again.GetLabels() != nil {
				t.Error("the caller's copy is the memory's")
			}
		})
	}

	var none *CreatedChildren
	none.remember(gvk, svc)
	none.seen(gvk, key)
	if _, _, ok := none.get(gvk, key); ok || none.Len() != 0 {
		t.Error("a nil memory remembers")
	}
}
