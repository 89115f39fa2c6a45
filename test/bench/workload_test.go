package main

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestSpreadPutsPerItemsInEachNamespace(t *testing.T) {
	tests := []struct {
		name      string
		s         spread
		items     map[int]string
		names     []string
		holds     []string
		holdsNot  []string
		watchedNS string
	}{
		{
			name:  "one namespace",
			s:     single("bench-operator-1000"),
			items: map[int]string{0: "bench-operator-1000", 999: "bench-operator-1000"},
			names: []string{"bench-operator-1000"}, watchedNS: "bench-operator-1000",
			holds:    []string{"bench-operator-1000"},
			holdsNot: []string{"bench-operator-10000", "bench-operator-1000-000", "default"},
		},
		{
			name: "250 items, 100 per namespace",
			s:    spread{prefix: "bench-operator-250", n: 250, per: 100},
			items: map[int]string{
				0: "bench-operator-250-000", 99: "bench-operator-250-000",
				100: "bench-operator-250-001", 249: "bench-operator-250-002",
			},
			names:     []string{"bench-operator-250-000", "bench-operator-250-001", "bench-operator-250-002"},
			watchedNS: "",
			holds:     []string{"bench-operator-250-000", "bench-operator-250-002"},
			holdsNot: []string{"bench-operator-250", "bench-operator-250-003", "bench-operator-250-1", "bench-operator-2500-000",
				"bench-operator-250-00x", "default"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.items {
				if got := tt.s.of(i); got != want {
					t.Errorf("item %d in %q, want %q", i, got, want)
				}
			}
			if got := tt.s.names(); !slices.Equal(got, tt.names) {
				t.Errorf("names %v, want %v", got, tt.names)
			}
			if got := tt.s.watched(); got != tt.watchedNS {
				t.Errorf("watched %q, want %q", got, tt.watchedNS)
			}
			for _, ns := range tt.holds {
				if !tt.s.holds(ns) {
					t.Errorf("does not hold %q", ns)
				}
			}
			for _, ns := range tt.holdsNot {
				if tt.s.holds(ns) {
					t.Errorf("holds %q", ns)
				}
			}
		})
	}
}

func TestDeletionLimitGrowsWithTheItems(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{0, 10 * time.Minute},
		{5000, 10 * time.Minute},
		{10000, 20 * time.Minute},
	} {
		if got := deletionLimit(tc.n); got != tc.want {
			t.Errorf("deletionLimit(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

func TestCleanUpKeepsTheCause(t *testing.T) {
	if cleanUp(nil) != nil {
		t.Fatal("cleanUp(nil) is an error")
	}
	cause := errors.New("namespace x still exists")
	err := cleanUp(cause)
	var ce *cleanUpError
	if !errors.As(err, &ce) || !errors.Is(err, cause) {
		t.Errorf("cleanUp(%v) = %v: not a cleanUpError wrapping the cause", cause, err)
	}
}
