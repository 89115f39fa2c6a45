package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The tables that set the variants of one N side by side (requests.go,
// watches.go, queues.go, webhooks.go) group and head their columns alike.

// resultsByN groups the results that have (has) what a table shows by N,
// in ascending N, each group in the results' order.
func resultsByN(results []result, has func(result) bool) (ns []int, byN map[int][]result) {
	byN = map[int][]result{}
	for _, r := range results {
		if has(r) {
			byN[r.n] = append(byN[r.n], r)
		}
	}
	return slices.Sorted(maps.Keys(byN)), byN
}

// writeVariantColumns writes the head of a table whose first column is
// first and which has one right-aligned column per variant of rs.
func writeVariantColumns(sb *strings.Builder, first string, rs []result) {
	fmt.Fprintf(sb, "| %s |", first)
	for _, r := range rs {
		fmt.Fprintf(sb, " %s |", r.name())
	}
	sb.WriteString("\n|---|" + strings.Repeat("---:|", len(rs)) + "\n")
}
