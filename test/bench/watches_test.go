package main

import (
	"strings"
	"testing"
)

const watchMetrics = `# HELP apiserver_watch_events_total [BETA] Number of events sent in watch clients
apiserver_watch_events_total{group="apps",resource="deployments",version="v1"} 40
apiserver_watch_events_total{group="apps.sunstrider.cn",resource="applications",version="v1"} 10
apiserver_watch_events_sizes_sum{group="apps",resource="deployments",version="v1"} 81920
apiserver_watch_events_sizes_count{group="apps",resource="deployments",version="v1"} 40
` + `apiserver_longrunning_requests{component="apiserver",group="apps",resource="deployments",scope="cluster",` +
	`subresource="",verb="WATCH",version="v1"} 3
` + `apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",` +
	`subresource="log",verb="CONNECT",version="v1"} 1
`

func TestParseWatches(t *testing.T) {
	w, err := parseWatches(watchMetrics)
	if err != nil {
		t.Fatal(err)
	}
	if w.events["deployments"] != 40 || w.events["applications"] != 10 || w.bytes["deployments"] != 81920 {
		t.Errorf("events %v, bytes %v", w.events, w.bytes)
	}
	if len(w.watchers) != 1 || w.watchers["deployments"] != 3 {
		t.Errorf("watchers %v, want only the WATCH requests", w.watchers)
	}
	if _, err := parseWatches(`apiserver_watch_events_total{resource="x"} many`); err == nil {
		t.Error("a malformed value was accepted")
	}
}

func TestRenderWatchesPerApplication(t *testing.T) {
	before, _ := parseWatches(watchMetrics)
	after := watchReading{
		events:   map[string]float64{"deployments": 240, "applications": 10, "pods": 10.2},
		bytes:    map[string]float64{"deployments": 81920 + 200*2048, "applications": 0, "pods": 0},
		watchers: map[string]float64{"deployments": 4},
	}
	out := renderWatches([]result{{variant: "operator", n: 100, watches: watchesSince(before, after)}})
	for _, want := range []string{
		"(N=100)", "| deployments | 2.00 / 4.0 (4) |", "| all | **2.1 / 4.0** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| applications |") || strings.Contains(out, "| pods |") {
		t.Errorf("resources under %.1f events per Application shown:\n%s", minWatchEventsPerApp, out)
	}
}

func TestProfileRowsDropsTheHeader(t *testing.T) {
	out := profileRows("File: kube-apiserver\nBuild ID: abc\nType: cpu\nTime: 2026-12-03\n" +
		"Showing nodes accounting for 2.1s, 7% of 30s total\n      flat  flat%   sum%        cum   cum%\n" +
		"     0.9s  3.00%  3.00%      1.2s  4.00%  runtime.mallocgc\n")
	if strings.Contains(out, "File:") || strings.Contains(out, "Build ID") || !strings.HasPrefix(out, "Showing") ||
		!strings.Contains(out, "runtime.mallocgc") {
		t.Errorf("profileRows:\n%s", out)
	}
}
