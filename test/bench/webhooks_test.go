package main

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

// histogram builds a cumulative histogram: bucket upper bounds in seconds
// and their cumulative counts, then the total count and sum.
func histogram(bounds []float64, cumulative []uint64, count uint64, sum float64) *dto.Histogram {
	h := &dto.Histogram{SampleCount: new(count), SampleSum: new(sum)}
	for i, b := range bounds {
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: new(b), CumulativeCount: new(cumulative[i])})
	}
	return h
}

// webhookBounds are kube-apiserver's buckets of webhookLatencyMetric.
var webhookBounds = []float64{0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25}

func TestParseWebhookHistograms(t *testing.T) {
	sample := func(name, typ, op, rejected string, cumulative []uint64, count uint64, sum float64) string {
		var sb strings.Builder
		labels := `name="` + name + `",operation="` + op + `",rejected="` + rejected + `",type="` + typ + `"`
		for i, b := range webhookBounds {
			sb.WriteString(webhookLatencyMetric + "_bucket{" + labels + `,le="` + formatFloat(b) + `"} ` +
				formatCount(cumulative[i]) + "\n")
		}
		sb.WriteString(webhookLatencyMetric + "_bucket{" + labels + `,le="+Inf"} ` + formatCount(count) + "\n")
		sb.WriteString(webhookLatencyMetric + "_sum{" + labels + "} " + formatFloat(sum) + "\n")
		sb.WriteString(webhookLatencyMetric + "_count{" + labels + "} " + formatCount(count) + "\n")
		return sb.String()
	}
	header := "# HELP " + webhookLatencyMetric + " [STABLE] Admission webhook latency\n# TYPE " +
		webhookLatencyMetric + " histogram\n"
	validate := webhookKey{name: "vapplication-v1.sunstrider.cn", typ: "validating", operation: "CREATE"}
	mutate := webhookKey{name: "mapplication-v1.sunstrider.cn", typ: "admit", operation: "CREATE"}
	inf := append(slices.Clone(webhookBounds), math.Inf(1)) // the parser keeps the +Inf bucket
	for _, tc := range []struct {
		name string
		text string
		want map[webhookKey]*dto.Histogram
	}{
		{
			name: "by webhook and operation, rejected and admitted calls summed, other metrics ignored",
			text: "# TYPE apiserver_request_total counter\n" +
				`apiserver_request_total{code="201",resource="applications",verb="POST"} 12` + "\n" + header +
				sample(validate.name, "validating", "CREATE", "false", []uint64{1, 8, 10, 10, 10, 10, 10, 10}, 10, 0.11) +
				sample(validate.name, "validating", "CREATE", "true", []uint64{0, 2, 2, 2, 2, 2, 2, 2}, 2, 0.02) +
				sample(mutate.name, "admit", "CREATE", "false", []uint64{12, 12, 12, 12, 12, 12, 12, 12}, 12, 0.03),
			want: map[webhookKey]*dto.Histogram{
				validate: histogram(inf, []uint64{1, 10, 12, 12, 12, 12, 12, 12, 12}, 12, 0.13),
				mutate:   histogram(inf, []uint64{12, 12, 12, 12, 12, 12, 12, 12, 12}, 12, 0.03),
			},
		},
		{
			name: "no webhook called yet",
			text: header,
			want: map[webhookKey]*dto.Histogram{},
		},
		{
			name: "no such metric at all",
			text: `apiserver_request_total{code="201",resource="pods",verb="POST"} 3` + "\n",
			want: map[webhookKey]*dto.Histogram{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWebhookHistograms(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d histograms %v, want %d", len(got), got, len(tc.want))
			}
			for key, want := range tc.want {
				if !sameHistogram(got[key], want) {
					t.Errorf("%v: got %v, want %v", key, got[key], want)
				}
			}
		})
	}
}

func TestParseWebhookHistogramsRefusesMalformed(t *testing.T) {
	text := "# TYPE " + webhookLatencyMetric + " histogram\n" +
		webhookLatencyMetric + `_bucket{name="v",le="0.005"} lots` + "\n"
	if _, err := parseWebhookHistograms(text); err == nil || !strings.Contains(err.Error(), webhookLatencyMetric) {
		t.Errorf("error %v, want one naming %s", err, webhookLatencyMetric)
	}
}

func TestWebhooksSince(t *testing.T) {
	kept := webhookKey{name: "v", typ: "validating", operation: "CREATE"}
	idle := webhookKey{name: "v", typ: "validating", operation: "UPDATE"}
	fresh := webhookKey{name: "m", typ: "admit", operation: "CREATE"}
	before := map[webhookKey]*dto.Histogram{
		kept: histogram(webhookBounds, []uint64{2, 3, 3, 3, 3, 3, 3, 3}, 3, 0.02),
		idle: histogram(webhookBounds, []uint64{1, 1, 1, 1, 1, 1, 1, 1}, 1, 0.001),
	}
	after := map[webhookKey]*dto.Histogram{
		kept:  histogram(webhookBounds, []uint64{5, 13, 14, 14, 14, 14, 14, 14}, 15, 0.3),
		idle:  histogram(webhookBounds, []uint64{1, 1, 1, 1, 1, 1, 1, 1}, 1, 0.001),
		fresh: histogram(webhookBounds, []uint64{4, 4, 4, 4, 4, 4, 4, 4}, 4, 0.01),
	}
	got := webhooksSince(before, after)
	want := map[webhookKey]*dto.Histogram{
		kept:  histogram(webhookBounds, []uint64{3, 10, 11, 11, 11, 11, 11, 11}, 12, 0.28),
		fresh: after[fresh],
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v (a webhook not called in the span is left out)", got, want)
	}
	for key, w := range want {
		if !sameHistogram(got[key], w) {
			t.Errorf("%v: got %v, want %v", key, got[key], w)
		}
	}
}

func TestLatencyOf(t *testing.T) {
	for _, tc := range []struct {
		name           string
		h              *dto.Histogram
		mean, p50, p99 float64
	}{
		{
			// rank 50 is the 40th of the 80 calls of (5 ms, 25 ms]: 5 + 20*40/80;
			// rank 99 the 9th of the 10 of (25 ms, 100 ms]: 25 + 75*9/10.
			name: "interpolated linearly in the bucket holding the rank",
			h:    histogram(webhookBounds, []uint64{10, 90, 100, 100, 100, 100, 100, 100}, 100, 1.5),
			mean: 0.015, p50: 0.015, p99: 0.0925,
		},
		{
			name: "every call in the first bucket: from 0 to its bound",
			h:    histogram(webhookBounds, []uint64{4, 4, 4, 4, 4, 4, 4, 4}, 4, 0.008),
			mean: 0.002, p50: 0.0025, p99: 0.00495,
		},
		{
			name: "ranks beyond the last bound: that bound, a floor",
			h:    histogram(webhookBounds, []uint64{0, 0, 0, 0, 0, 0, 0, 1}, 2, 60),
			mean: 30, p50: 25, p99: 25,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := latencyOf(tc.h)
			if got.calls != tc.h.GetSampleCount() {
				t.Errorf("calls %d, want %d", got.calls, tc.h.GetSampleCount())
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"mean", got.mean, tc.mean}, {"p50", got.p50, tc.p50}, {"p99", got.p99, tc.p99}} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Errorf("%s %g, want %g", c.what, c.got, c.want)
				}
			}
		})
	}
	if got := latencyOf(&dto.Histogram{}); got != (webhookLatency{}) {
		t.Errorf("no calls: got %+v, want zero", got)
	}
}

func TestRenderWebhooks(t *testing.T) {
	validate := webhookKey{name: "vapplication-v1.sunstrider.cn", typ: "validating", operation: "CREATE"}
	mutate := webhookKey{name: "mapplication-v1.sunstrider.cn", typ: "admit", operation: "CREATE"}
	results := []result{
		{variant: "floor (plain client)", n: 10},
		{variant: "operator", n: 10, webhooks: map[webhookKey]*dto.Histogram{
			validate: histogram(webhookBounds, []uint64{0, 10, 10, 10, 10, 10, 10, 10}, 10, 0.12),
			mutate:   histogram(webhookBounds, []uint64{10, 10, 10, 10, 10, 10, 10, 10}, 10, 0.03),
		}},
	}
	got := renderWebhooks(results)
	containsAll(t, "table", got,
		"| N | variant | webhook | type | operation | calls/app | mean | p50 | p99 |",
		"| 10 | operator | mapplication-v1.sunstrider.cn | mutating | CREATE | 1.00 | 3.0 ms | 2.5 ms | 5.0 ms |",
		"| 10 | operator | vapplication-v1.sunstrider.cn | validating | CREATE | 1.00 | 12 ms | 15 ms | 25 ms |",
	)
	if strings.Contains(got, "floor") {
		t.Errorf("a variant with no webhook calls has rows:\n%s", got)
	}
	if got := renderWebhooks(results[:1]); got != "" {
		t.Errorf("no webhook calls at all: got %q, want no table", got)
	}
}

func TestRenderAccess(t *testing.T) {
	validate := webhookKey{name: "vapplication-v1.sunstrider.cn", typ: "validating", operation: "CREATE"}
	validateOther := webhookKey{name: "vdrink-v1.example.com", typ: "validating", operation: "CREATE"}
	validateUpdate := webhookKey{name: "vapplication-v1.sunstrider.cn", typ: "validating", operation: "UPDATE"}
	mutate := webhookKey{name: "mapplication-v1.sunstrider.cn", typ: "admit", operation: "CREATE"}
	requester := result{variant: operatorVariant(configv1alpha1.ChildAccessRequester), n: 100,
		childAccess: configv1alpha1.ChildAccessRequester, converge: 12 * time.Second, p50: 3 * time.Second,
		requests: map[string]float64{"POST applications": 100, sarKind: 8, "GET deployments": 2192},
		webhooks: map[webhookKey]*dto.Histogram{
			// Two validating webhooks' creates: summed before the quantiles.
			validate:      histogram(webhookBounds, []uint64{0, 100, 100, 100, 100, 100, 100, 100}, 100, 1.5),
			validateOther: histogram(webhookBounds, []uint64{0, 50, 100, 100, 100, 100, 100, 100}, 100, 2.5),
			// Updates are not creates.
			validateUpdate: histogram(webhookBounds, []uint64{0, 0, 0, 0, 0, 0, 0, 5}, 5, 100),
			mutate:         histogram(webhookBounds, []uint64{100, 100, 100, 100, 100, 100, 100, 100}, 100, 0.3),
		}}
	delegated := result{variant: operatorVariant(configv1alpha1.ChildAccessDelegated), n: 100,
		childAccess: configv1alpha1.ChildAccessDelegated, converge: 11 * time.Second, p50: 2500 * time.Millisecond,
		requests: map[string]float64{"POST applications": 100, "GET deployments": 2190},
		webhooks: map[webhookKey]*dto.Histogram{
			validate: histogram(webhookBounds, []uint64{100, 100, 100, 100, 100, 100, 100, 100}, 100, 0.2),
		}}
	got := renderAccess([]result{{variant: "floor (plain client)", n: 100}, requester, delegated})
	containsAll(t, "table", got,
		"| N | childAccess | converged in | create→Ready p50 | requests/app | SubjectAccessReviews/app "+
			"| validating webhook | mutating webhook |",
		// 200 creates, 150 in (5 ms, 25 ms], 50 in (25 ms, 100 ms]: rank 100 at
		// 5 + 20*100/150, rank 198 at 25 + 75*48/50.
		"| 100 | Requester | 12.0 s | 3000 ms | 23.0 | 0.080 | 20 ms / 18 ms / 97 ms | 3.0 ms / 2.5 ms / 5.0 ms |",
		"| 100 | Delegated | 11.0 s | 2500 ms | 22.9 | 0.000 | 2.0 ms / 2.5 ms / 5.0 ms | - |",
	)
	if got := renderAccess([]result{requester, {variant: "operator", n: 100}}); got != "" {
		t.Errorf("one mode only: got %q, want no table", got)
	}
}

// sameHistogram compares count, sum (to rounding) and buckets.
func sameHistogram(a, b *dto.Histogram) bool {
	if a == nil || b == nil || a.GetSampleCount() != b.GetSampleCount() ||
		math.Abs(a.GetSampleSum()-b.GetSampleSum()) > 1e-9 || len(a.GetBucket()) != len(b.GetBucket()) {
		return false
	}
	for i, ab := range a.GetBucket() {
		bb := b.GetBucket()[i]
		if ab.GetUpperBound() != bb.GetUpperBound() || ab.GetCumulativeCount() != bb.GetCumulativeCount() {
			return false
		}
	}
	return true
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
func formatCount(c uint64) string  { return strconv.FormatUint(c, 10) }
