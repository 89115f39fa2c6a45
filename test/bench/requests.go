package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/rest"
)

// requestsMetric is kube-apiserver's counter of the requests it served, by
// verb, group, resource, subresource and code.
const requestsMetric = "apiserver_request_total"

// minRequestsPerApp hides the request kinds rarer than this from the table
// (sarKind excepted).
const minRequestsPerApp = 0.2

// apiserverReading is what kube-apiserver's /metrics said at one moment:
// the requests it had served (parseRequests) and its admission webhooks'
// latency histograms (parseWebhookHistograms).
type apiserverReading struct {
	requests map[string]float64
	webhooks map[webhookKey]*dto.Histogram
	watches  watchReading
}

// readAPIServer scrapes kube-apiserver's /metrics once.
func readAPIServer(ctx context.Context, rc rest.Interface) (apiserverReading, error) {
	data, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiserverReading{}, fmt.Errorf("reading kube-apiserver's /metrics: %w", err)
	}
	requests, err := parseRequests(string(data))
	if err != nil {
		return apiserverReading{}, err
	}
	webhooks, err := parseWebhookHistograms(string(data))
	if err != nil {
		return apiserverReading{}, err
	}
	watches, err := parseWatches(string(data))
	if err != nil {
		return apiserverReading{}, err
	}
	return apiserverReading{requests: requests, webhooks: webhooks, watches: watches}, nil
}

// parseRequests sums the apiserver_request_total samples of a Prometheus
// text exposition by request kind: verb and resource, with the
// subresource after a slash ("POST deployments", "PATCH pods/status").
func parseRequests(text string) (map[string]float64, error) {
	out := map[string]float64{}
	for line := range strings.Lines(text) {
		sample, ok := strings.CutPrefix(line, requestsMetric+"{")
		if !ok {
			continue
		}
		labelText, valueText, ok := strings.Cut(sample, "} ")
		if !ok {
			return nil, fmt.Errorf("%s: malformed sample %q", requestsMetric, strings.TrimSpace(line))
		}
		value, err := strconv.ParseFloat(strings.TrimSpace(valueText), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value of %q: %w", requestsMetric, strings.TrimSpace(line), err)
		}
		labels := parseLabels(labelText)
		kind := labels["verb"] + " " + labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			kind += "/" + sub
		}
		out[kind] += value
	}
	return out, nil
}

// parseLabels parses `a="x",b="y"`; label values here hold no quotes.
func parseLabels(s string) map[string]string {
	labels := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(pair, "=")
		if ok {
			labels[name] = strings.Trim(value, `"`)
		}
	}
	return labels
}

// requestsSince is the requests of each kind served between two readings.
func requestsSince(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for kind, v := range after {
		if d := v - before[kind]; d > 0 {
			out[kind] = d
		}
	}
	return out
}

// renderRequests is one table per N: the requests kube-apiserver served
// per Application (from anyone: the variant's client, the controllers of
// the cluster, kwok) from the first create to convergence, by kind, for
// every variant.
func renderRequests(results []result) string {
	var sb strings.Builder
	ns, byN := resultsByN(results, func(r result) bool { return r.requests != nil })
	for _, n := range ns {
		rs := byN[n]
		kinds := map[string]bool{}
		for _, r := range rs {
			for kind, v := range r.requests {
				// SubjectAccessReviews are shown however few: what the
				// admission access check costs (docs/performance.md).
				if v/float64(n) >= minRequestsPerApp || kind == sarKind {
					kinds[kind] = true
				}
			}
		}
		order := slices.Collect(maps.Keys(kinds))
		slices.SortFunc(order, func(a, b string) int { // most frequent first, for the first variant
			if c := cmp.Compare(rs[0].requests[b], rs[0].requests[a]); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		fmt.Fprintf(&sb, "Requests kube-apiserver served per Application, first create to convergence (N=%d):\n\n", n)
		writeVariantColumns(&sb, "request", rs)
		for _, kind := range order {
			fmt.Fprintf(&sb, "| %s |", kind)
			for _, r := range rs {
				fmt.Fprintf(&sb, " %.2f |", r.requests[kind]/float64(n))
			}
			sb.WriteString("\n")
		}
		sb.WriteString("| all |")
		for _, r := range rs {
			var total float64
			for _, v := range r.requests {
				total += v
			}
			fmt.Fprintf(&sb, " **%.1f** |", total/float64(n))
		}
		sb.WriteString("\n\n")
	}
	return strings.TrimSuffix(sb.String(), "\n\n")
}
