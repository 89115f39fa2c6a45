package main

import (
	"maps"
	"strings"
	"testing"
)

func TestParseRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		want    map[string]float64
		wantErr string
	}{
		{
			name: "summed by verb, resource and subresource over groups, scopes, codes and versions",
			text: "# HELP apiserver_request_total [STABLE] Counter of apiserver requests\n" +
				"# TYPE apiserver_request_total counter\n" +
				`apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",` +
				`resource="deployments",scope="resource",subresource="",verb="POST",version="v1"} 988` + "\n" +
				`apiserver_request_total{code="409",component="apiserver",dry_run="",group="apps",` +
				`resource="deployments",scope="resource",subresource="",verb="POST",version="v1"} 2` + "\n" +
				`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",` +
				`resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 996` + "\n" +
				`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",` +
				`resource="",scope="",subresource="/metrics",verb="GET",version=""} 3` + "\n" +
				`apiserver_request_duration_seconds_bucket{verb="POST",resource="deployments",le="0.005"} 12` + "\n",
			want: map[string]float64{"POST deployments": 990, "PATCH pods/status": 996, "GET //metrics": 3},
		},
		{name: "no requests yet", text: "# TYPE apiserver_request_total counter\n", want: map[string]float64{}},
		{
			name:    "a malformed value",
			text:    `apiserver_request_total{verb="GET",resource="pods"} lots` + "\n",
			wantErr: "value of",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRequests(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRequestsSince(t *testing.T) {
	before := map[string]float64{"POST pods": 10, "GET pods": 5}
	after := map[string]float64{"POST pods": 30, "GET pods": 5, "PATCH pods/status": 7}
	want := map[string]float64{"POST pods": 20, "PATCH pods/status": 7}
	if got := requestsSince(before, after); !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestRenderRequests(t *testing.T) {
	results := []result{
		{variant: "floor", n: 10, requests: map[string]float64{"POST deployments": 10, "GET pods": 1}},
		{variant: "operator", n: 10, requests: map[string]float64{"APPLY deployments": 10, "POST deployments": 1,
			sarKind: 1}},
		{variant: "no figures", n: 10},
	}
	got := renderRequests(results)
	containsAll(t, "table", got,
		"(N=10):",
		"| request | floor | operator |",
		"| POST deployments | 1.00 | 0.10 |",
		"| APPLY deployments | 0.00 | 1.00 |",
		"| all | **1.1** | **1.2** |",
		// The admission access checks' reviews show however few.
		"| POST subjectaccessreviews | 0.00 | 0.10 |",
	)
	if strings.Contains(got, "GET pods") {
		t.Errorf("a kind under %.1f per Application is shown:\n%s", minRequestsPerApp, got)
	}
}
