package testutil

import (
	"github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
)

// Emissions returns how many times the Events of each key were emitted, as
// far as the API server shows: one for an Event without a series, its
// series.count for one with. client-go's recorder (tools/events) makes a
// repeat of an Event (same object at the same resourceVersion, related
// object, type, reason, action and reporter, whatever its note) a series
// of the first instead of a new Event: it writes series.count 2 at once,
// later counts only when the series ends or is refreshed (minutes later).
// Counting Event objects misses such a repeat (a retry on an unchanged
// object, say); an emission count of 1 holds only while there was none.
func Emissions(events []eventsv1.Event, key func(eventsv1.Event) string) map[string]int32 {
	out := map[string]int32{}
	for _, e := range events {
		n := int32(1)
		if e.Series != nil {
			n = e.Series.Count
		}
		out[key(e)] += n
	}
	return out
}

// ByReason keys an Event by its reason (Emissions).
func ByReason(e eventsv1.Event) string { return e.Reason }

// ByRelated keys an Event by the name of its related object (Emissions).
func ByRelated(e eventsv1.Event) string {
	if e.Related == nil {
		return ""
	}
	return e.Related.Name
}

// ExpectEmissions waits until events shows want (Emissions by key), no
// Event of them written more than once through writes (the running
// manager's), and expects both to hold for 1 s. The recorder sends an
// Event, and a repeat's series, in the background: one look could come
// before the repeat. A repeat that comes while the first Event's create is
// still under way reaches the API server only after a retry (10 s); its
// first attempt is a write of the same Event, which writes counts at once.
// Called once what could repeat an Event is done.
func ExpectEmissions(g gomega.Gomega, writes *WriteCounter, events func(gomega.Gomega) []eventsv1.Event,
	key func(eventsv1.Event) string, want map[string]int32) {
	emitted := func(g gomega.Gomega) {
		listed := events(g)
		g.Expect(Emissions(listed, key)).To(gomega.Equal(want), "Events (a series counts its repeats)")
		for _, e := range listed {
			view := writes.In(eventNamed(e.Namespace, e.Name))
			g.Expect(view.Total()).To(gomega.BeNumerically("<=", 1), "Event %s/%s (%s) written more than once, a repeat:\n%s",
				e.Namespace, e.Name, e.Reason, view)
		}
	}
	g.Eventually(emitted).Should(gomega.Succeed())
	g.Consistently(emitted, "1s").Should(gomega.Succeed())
}

// eventNamed selects the writes of the Event ns/name: its create, and the
// writes of a series of it.
func eventNamed(ns, name string) Scope {
	return func(w Write) bool { return w.Resource == eventsResource && w.Namespace == ns && w.Name == name }
}
