package testutil

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
)

// A repeat of an Event is a series of the first, not a second Event: it
// counts, whether the recorder made it a series or a new Event.
func TestEmissionsCountASeriesRepeats(t *testing.T) {
	event := func(reason, related string, series int32) eventsv1.Event {
		e := eventsv1.Event{Reason: reason, Related: &corev1.ObjectReference{Name: related}}
		if series > 0 {
			e.Series = &eventsv1.EventSeries{Count: series}
		}
		return e
	}
	tests := []struct {
		name   string
		events []eventsv1.Event
		key    func(eventsv1.Event) string
		want   map[string]int32
	}{
		{"none", nil, ByReason, map[string]int32{}},
		{"once", []eventsv1.Event{event("A", "p", 0)}, ByReason, map[string]int32{"A": 1}},
		{"repeated as a series", []eventsv1.Event{event("A", "p", 2)}, ByReason, map[string]int32{"A": 2}},
		{"repeated as a second Event", []eventsv1.Event{event("A", "p", 0), event("A", "p", 0)}, ByReason, map[string]int32{"A": 2}},
		{"by related object", []eventsv1.Event{event("A", "p", 0), event("A", "q", 3)}, ByRelated, map[string]int32{"p": 1, "q": 3}},
		{"two reasons", []eventsv1.Event{event("A", "p", 0), event("B", "p", 0)}, ByReason, map[string]int32{"A": 1, "B": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Emissions(tt.events, tt.key); !maps.Equal(got, tt.want) {
				t.Errorf("Emissions = %v, want %v", got, tt.want)
			}
		})
	}
}
