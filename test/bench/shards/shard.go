package main

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"strings"
)

// shardKey is the field every selector of this command hashes: an
// Application and its children share a namespace, so they share a shard.
const shardKey = "object.metadata.namespace"

// hashEnd is the exclusive upper bound of the hash space, 2^64, as the API
// server spells it (the only 17-digit value it accepts).
const hashEnd = "0x10000000000000000"

// fnv64a is the 64-bit FNV-1a hash of s, what the API server computes
// (k8s.io/apimachinery/pkg/sharding.HashField) over the selected field.
func fnv64a(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// hexBound is a hash as a range bound: 0x and exactly 16 lowercase digits.
// The API server refuses any other width ('0x0' included), but for 2^64.
func hexBound(h uint64) string { return fmt.Sprintf("0x%016x", h) }

// hashRange is [start, end) over the 64-bit hash space; last means end is
// 2^64, which a uint64 cannot hold.
type hashRange struct {
	start, end uint64
	last       bool
}

func (r hashRange) contains(h uint64) bool { return h >= r.start && (r.last || h < r.end) }

func (r hashRange) endString() string {
	if r.last {
		return hashEnd
	}
	return hexBound(r.end)
}

// shardRanges splits the hash space into k contiguous ranges; range i
// starts at floor(i*2^64/k).
func shardRanges(k int) []hashRange {
	if k < 1 {
		panic(fmt.Sprintf("shardRanges: %d shards", k))
	}
	out := make([]hashRange, k)
	for i := range k {
		out[i].start = boundary(i, k)
		if i == k-1 {
			out[i].last = true
		} else {
			out[i].end = boundary(i+1, k)
		}
	}
	return out
}

// boundary is floor(i*2^64/k) for 0 <= i < k.
func boundary(i, k int) uint64 {
	q, _ := bits.Div64(uint64(i), 0, uint64(k))
	return q
}

// exactRange is the range that holds the hash h alone.
func exactRange(h uint64) hashRange {
	if h == ^uint64(0) {
		return hashRange{start: h, last: true}
	}
	return hashRange{start: h, end: h + 1}
}

// selector is the shardSelector of the given ranges over key, OR-ed, in
// the API server's own canonical spelling (it echoes it in shardInfo).
func selector(key string, ranges ...hashRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = fmt.Sprintf("shardRange(%s, '%s', '%s')", key, hexBound(r.start), r.endString())
	}
	return strings.Join(parts, " || ")
}

// shardOf is the index of the range of k that holds h.
func shardOf(h uint64, k int) int {
	for i, r := range shardRanges(k) {
		if r.contains(h) {
			return i
		}
	}
	panic("unreachable: the ranges cover the hash space")
}

// balance is how many of names fall into each of k shards by the hash of
// the name.
func balance(names []string, k int) []int {
	out := make([]int, k)
	for _, n := range names {
		out[shardOf(fnv64a(n), k)]++
	}
	return out
}
