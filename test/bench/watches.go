package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// What kube-apiserver sent to its watchers, by resource, from its own
// instruments: apiserver_watch_events_total and the sum of
// apiserver_watch_events_sizes (bytes) since the variant's first create,
// and apiserver_longrunning_requests{verb="WATCH"} (the watches open at
// its end). Beside the requests (requests.go) and the admission webhooks
// (webhooks.go), this is the rest of the API server's work per source: each
// event is encoded once per watcher.

const (
	watchEventsMetric = "apiserver_watch_events_total"
	watchBytesMetric  = "apiserver_watch_events_sizes_sum"
	watchersMetric    = "apiserver_longrunning_requests"
)

// watchReading is the watch figures of one /metrics scrape, by resource.
type watchReading struct {
	events, bytes, watchers map[string]float64
}

// parseWatches reads the watch figures of a Prometheus text exposition.
func parseWatches(text string) (watchReading, error) {
	w := watchReading{events: map[string]float64{}, bytes: map[string]float64{}, watchers: map[string]float64{}}
	for line := range strings.Lines(text) {
		var into map[string]float64
		var rest string
		switch {
		case strings.HasPrefix(line, watchEventsMetric+"{"):
			into, rest = w.events, line[len(watchEventsMetric)+1:]
		case strings.HasPrefix(line, watchBytesMetric+"{"):
			into, rest = w.bytes, line[len(watchBytesMetric)+1:]
		case strings.HasPrefix(line, watchersMetric+"{"):
			into, rest = w.watchers, line[len(watchersMetric)+1:]
		default:
			continue
		}
		labelText, valueText, ok := strings.Cut(rest, "} ")
		if !ok {
			return w, fmt.Errorf("malformed sample %q", strings.TrimSpace(line))
		}
		value, err := strconv.ParseFloat(strings.TrimSpace(valueText), 64)
		if err != nil {
			return w, fmt.Errorf("value of %q: %w", strings.TrimSpace(line), err)
		}
		labels := parseLabels(labelText)
		if into == nil || (strings.HasPrefix(line, watchersMetric) && labels["verb"] != "WATCH") {
			continue
		}
		into[labels["resource"]] += value
	}
	return w, nil
}

// watchesSince is what was sent between two readings; the watchers are
// after's.
func watchesSince(before, after watchReading) watchReading {
	return watchReading{events: requestsSince(before.events, after.events),
		bytes: requestsSince(before.bytes, after.bytes), watchers: after.watchers}
}

// minWatchEventsPerApp hides the resources with fewer events per
// Application than this from the table.
const minWatchEventsPerApp = 0.5

// renderWatches tabulates, for each N, the watch events and KiB sent per
// Application by resource, for each variant side by side, and the watches
// open at the end.
func renderWatches(results []result) string {
	var sb strings.Builder
	ns, byN := resultsByN(results, func(r result) bool { return r.watches.events != nil })
	for _, n := range ns {
		rs := byN[n]
		resources := map[string]bool{}
		for _, r := range rs {
			for res, v := range r.watches.events {
				if v/float64(n) >= minWatchEventsPerApp {
					resources[res] = true
				}
			}
		}
		order := slices.Collect(maps.Keys(resources))
		slices.SortFunc(order, func(a, b string) int {
			if c := cmp.Compare(rs[len(rs)-1].watches.bytes[b], rs[len(rs)-1].watches.bytes[a]); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		fmt.Fprintf(&sb, "Watch events kube-apiserver sent per Application, first create to convergence (N=%d): "+
			"events / KiB (watches open at the end):\n\n", n)
		writeVariantColumns(&sb, "resource", rs)
		for _, res := range order {
			fmt.Fprintf(&sb, "| %s |", res)
			for _, r := range rs {
				fmt.Fprintf(&sb, " %.2f / %.1f (%.0f) |", r.watches.events[res]/float64(n),
					r.watches.bytes[res]/1024/float64(n), r.watches.watchers[res])
			}
			sb.WriteString("\n")
		}
		sb.WriteString("| all |")
		for _, r := range rs {
			var events, bytes float64
			for _, v := range r.watches.events {
				events += v
			}
			for _, v := range r.watches.bytes {
				bytes += v
			}
			fmt.Fprintf(&sb, " **%.1f / %.1f** |", events/float64(n), bytes/1024/float64(n))
		}
		sb.WriteString("\n\n")
	}
	return strings.TrimSuffix(sb.String(), "\n\n")
}
