package main

import (
	"strings"
	"testing"
)

const queueMetrics = `# HELP workqueue_work_duration_seconds [ALPHA] How long in seconds processing an item takes.
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{name="deployment",le="0.001"} 10
workqueue_work_duration_seconds_bucket{name="deployment",le="+Inf"} 300
workqueue_work_duration_seconds_sum{name="deployment"} 2.5
workqueue_work_duration_seconds_count{name="deployment"} 300
workqueue_work_duration_seconds_bucket{name="endpoint",le="+Inf"} 20
workqueue_work_duration_seconds_sum{name="endpoint"} 0.25
workqueue_work_duration_seconds_count{name="endpoint"} 20
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="deployment"} 310
`

func TestParseQueues(t *testing.T) {
	q, err := parseQueues(queueMetrics)
	if err != nil {
		t.Fatal(err)
	}
	if q.done["deployment"] != 300 || q.seconds["deployment"] != 2.5 || q.done["endpoint"] != 20 {
		t.Errorf("done %v, seconds %v", q.done, q.seconds)
	}
	if len(q.done) != 2 || len(q.seconds) != 2 {
		t.Errorf("other metrics read as queues: done %v, seconds %v", q.done, q.seconds)
	}
	other := "# TYPE apiserver_request_total counter\napiserver_request_total 1\n"
	if q, err := parseQueues(other); err != nil || len(q.done) != 0 {
		t.Errorf("a text without the metric: %v, %v; want no queues", q.done, err)
	}
	if _, err := parseQueues(`workqueue_work_duration_seconds_count{name="x"} many`); err == nil {
		t.Error("a malformed value was accepted")
	}
}

func TestMetricsAddress(t *testing.T) {
	for _, tc := range []struct {
		name, cmdline, want string
	}{
		{"port only", "kube-controller-manager\x00--secure-port=32001\x00--v=2", "127.0.0.1:32001"},
		{"bind address", "kcm\x00--bind-address=10.0.0.5\x00--secure-port=10257", "10.0.0.5:10257"},
		{"any address", "kcm\x00--bind-address=0.0.0.0\x00--secure-port=10257\x00", "127.0.0.1:10257"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := metricsAddress(tc.cmdline)
			if err != nil || got != tc.want {
				t.Errorf("metricsAddress = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, cmdline := range []string{"kcm\x00--v=2", "kcm\x00--secure-port=0"} {
		if got, err := metricsAddress(cmdline); err == nil {
			t.Errorf("metricsAddress(%q) = %q, want an error (no secure port)", cmdline, got)
		}
	}
}

func TestRenderQueuesPerApplication(t *testing.T) {
	before, _ := parseQueues(queueMetrics)
	after := queueReading{
		done:    map[string]float64{"deployment": 700, "endpoint": 25, "resource_quota": 1},
		seconds: map[string]float64{"deployment": 4.5, "endpoint": 1.25, "resource_quota": 9},
	}
	out := renderQueues([]result{{variant: "operator", n: 100, queues: queuesSince(before, after)}})
	for _, want := range []string{"(N=100)", "| operator |", "| deployment | 4.00 / 20.0 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| endpoint |") || strings.Contains(out, "| resource_quota |") {
		t.Errorf("queues under %.1f items per Application shown:\n%s", minQueueItemsPerApp, out)
	}
}
