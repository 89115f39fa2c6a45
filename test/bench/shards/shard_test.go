package main

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestFNV64a(t *testing.T) {
	// Published FNV-1a 64 test vectors.
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := fnv64a(tc.in); got != tc.want {
				t.Errorf("fnv64a(%q) = %#x, want %#x", tc.in, got, tc.want)
			}
		})
	}
}

func TestSelector(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ranges []hashRange
		want   string
	}{
		{"whole space", shardRanges(1),
			"shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')"},
		{"2 shards, shard 1", shardRanges(2)[1:],
			"shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"},
		{"4 shards, shards 0 and 2", []hashRange{shardRanges(4)[0], shardRanges(4)[2]},
			"shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000') || " +
				"shardRange(object.metadata.namespace, '0x8000000000000000', '0xc000000000000000')"},
		{"3 shards, shard 1", shardRanges(3)[1:2],
			"shardRange(object.metadata.namespace, '0x5555555555555555', '0xaaaaaaaaaaaaaaaa')"},
		{"exact hash", []hashRange{exactRange(0xab)},
			"shardRange(object.metadata.namespace, '0x00000000000000ab', '0x00000000000000ac')"},
		{"exact hash at the top", []hashRange{exactRange(^uint64(0))},
			"shardRange(object.metadata.namespace, '0xffffffffffffffff', '0x10000000000000000')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := selector(shardKey, tc.ranges...); got != tc.want {
				t.Errorf("selector = %q\nwant       %q", got, tc.want)
			}
		})
	}
}

func TestShardOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    uint64
		k    int
		want int
	}{
		{"one shard holds everything", ^uint64(0), 1, 0},
		{"lowest hash", 0, 4, 0},
		{"just below a bound", 0x3fffffffffffffff, 4, 0},
		{"on a bound (inclusive start)", 0x4000000000000000, 4, 1},
		{"highest hash", ^uint64(0), 4, 3},
		{"upper half of 2", 0x8000000000000000, 2, 1},
		{"3 shards, on the second bound", 0xaaaaaaaaaaaaaaaa, 3, 2},
		{"3 shards, just below it", 0xaaaaaaaaaaaaaaa9, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shardOf(tc.h, tc.k); got != tc.want {
				t.Errorf("shardOf(%#x, %d) = %d, want %d", tc.h, tc.k, got, tc.want)
			}
		})
	}
}

func TestShardRangesTile(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 7, 16} {
		rs := shardRanges(k)
		if rs[0].start != 0 || !rs[k-1].last {
			t.Errorf("k=%d: ranges do not span the hash space: %+v", k, rs)
		}
		for i := 1; i < k; i++ {
			if rs[i-1].last || rs[i-1].end != rs[i].start {
				t.Errorf("k=%d: gap or overlap between range %d and %d: %+v", k, i-1, i, rs)
			}
		}
	}
}

func TestBalance(t *testing.T) {
	seq := func(format string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, i)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		names []string
		k     int
		want  []int
	}{
		{"no names", nil, 2, []int{0, 0}},
		{"one name", []string{"default"}, 4, []int{0, 0, 0, 1}},
		// FNV-1a has no final mixing: names that differ only in their last
		// two characters differ only in middle bits of the hash.
		{"sequential suffixes cluster", seq("shards-%03d", 100), 4, []int{100, 0, 0, 0}},
		{"index first spreads", seq("%03d-shards", 100), 4, []int{19, 24, 28, 29}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := balance(tc.names, tc.k); !slices.Equal(got, tc.want) {
				t.Errorf("balance = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNamespaceName(t *testing.T) {
	seen := map[string]int{}
	for i := range 1000 {
		n := namespaceName(i)
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Fatalf("namespaceName(%d) = %q: %v", i, n, errs)
		}
		if j, dup := seen[n]; dup {
			t.Fatalf("namespaceName(%d) = namespaceName(%d) = %q", i, j, n)
		}
		seen[n] = i
	}
}
