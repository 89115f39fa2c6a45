package main

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/testutil"
)

// webhookLatencyMetric is kube-apiserver's histogram of the time each
// admission webhook call took, as the API server saw it (network and TLS
// included), by webhook name, type (admit: mutating; validating),
// operation and whether it rejected.
const webhookLatencyMetric = "apiserver_admission_webhook_admission_duration_seconds"

// webhookKey is one webhook and operation, rejected or not.
type webhookKey struct {
	name, typ, operation string
}

// webhookLatency is what one webhook's calls of one operation took over a
// span: how many, their mean, and p50 and p99 estimated from the buckets.
type webhookLatency struct {
	calls          uint64
	mean, p50, p99 float64 // seconds
}

// parseWebhookHistograms returns the webhookLatencyMetric histograms of a
// Prometheus text exposition by webhook and operation, rejected calls and
// the others summed.
func parseWebhookHistograms(text string) (map[webhookKey]*dto.Histogram, error) {
	out := map[webhookKey]*dto.Histogram{}
	family, err := histogramFamily(text, webhookLatencyMetric)
	if err != nil {
		return nil, err
	}
	for _, m := range family.GetMetric() {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		labels := labelsOf(m)
		key := webhookKey{name: labels["name"], typ: labels["type"], operation: labels["operation"]}
		if prev, ok := out[key]; ok {
			out[key] = addHistograms(prev, h, 1)
		} else {
			out[key] = addHistograms(&dto.Histogram{}, h, 1)
		}
	}
	return out, nil
}

// labelsOf is m's labels by name.
func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

// histogramFamily parses the family of the histogram metric out of a
// Prometheus text exposition (the library's parser, component-base's
// metrics/testutil); only that metric's lines are parsed (kube-apiserver's
// /metrics holds megabytes of others). A metric the text lacks is an empty
// family.
func histogramFamily(text, metric string) (*dto.MetricFamily, error) {
	var sb strings.Builder
	for line := range strings.Lines(text) {
		if strings.Contains(line, metric) {
			sb.WriteString(line)
		}
	}
	if sb.Len() == 0 {
		return &dto.MetricFamily{}, nil
	}
	families, err := testutil.TextToMetricFamilies(strings.NewReader(sb.String()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", metric, err)
	}
	if family, ok := families[metric]; ok {
		return family, nil
	}
	return &dto.MetricFamily{}, nil
}

// addHistograms returns a + sign*b, bucket by bucket (the same bounds: one
// metric's), for summing label sets (sign 1) and for the difference of two
// scrapes (sign -1). A bucket of b that a lacks is taken as b's.
func addHistograms(a, b *dto.Histogram, sign float64) *dto.Histogram {
	count := float64(a.GetSampleCount()) + sign*float64(b.GetSampleCount())
	sum := a.GetSampleSum() + sign*b.GetSampleSum()
	out := &dto.Histogram{SampleCount: new(uint64(math.Max(count, 0))), SampleSum: new(sum)}
	counts := map[float64]float64{}
	for _, bk := range a.GetBucket() {
		counts[bk.GetUpperBound()] += float64(bk.GetCumulativeCount())
	}
	for _, bk := range b.GetBucket() {
		counts[bk.GetUpperBound()] += sign * float64(bk.GetCumulativeCount())
	}
	for _, bound := range slices.Sorted(maps.Keys(counts)) {
		out.Bucket = append(out.Bucket, &dto.Bucket{
			UpperBound: new(bound), CumulativeCount: new(uint64(math.Max(counts[bound], 0))),
		})
	}
	return out
}

// webhooksSince is each webhook's histogram of the calls made between two
// readings (parseWebhookHistograms), for those called.
func webhooksSince(before, after map[webhookKey]*dto.Histogram) map[webhookKey]*dto.Histogram {
	out := map[webhookKey]*dto.Histogram{}
	for key, a := range after {
		d := a
		if b, ok := before[key]; ok {
			d = addHistograms(a, b, -1)
		}
		if d.GetSampleCount() > 0 {
			out[key] = d
		}
	}
	return out
}

// latencyOf is the calls of h, their mean and their p50 and p99.
//
// The quantiles are Kubernetes' own estimate (component-base's
// metrics/testutil, which its scheduler_perf benchmarks use; the same
// linear interpolation as PromQL's histogram_quantile, which is not
// importable without the whole Prometheus server): linear within the
// bucket that holds the rank. kube-apiserver's buckets for this metric are
// 5, 25, 100, 500 ms, 1, 2.5, 10 and 25 s, so a p50 between 5 and 25 ms is
// an interpolation over a 20 ms wide bucket, not a measurement; the mean
// (sum/count) is exact.
func latencyOf(h *dto.Histogram) webhookLatency {
	if h.GetSampleCount() == 0 {
		return webhookLatency{}
	}
	th := &testutil.Histogram{Histogram: h}
	return webhookLatency{calls: h.GetSampleCount(), mean: th.Average(), p50: th.Quantile(0.5), p99: th.Quantile(0.99)}
}

// webhookType is how the tables name a webhook's type label.
func webhookType(typ string) string {
	if typ == "admit" {
		return "mutating"
	}
	return typ
}

// ms formats seconds as milliseconds.
func ms(s float64) string {
	if s < 0.01 {
		return fmt.Sprintf("%.1f ms", 1000*s)
	}
	return fmt.Sprintf("%.0f ms", 1000*s)
}

// renderWebhooks tabulates, for every variant whose span saw admission
// webhook calls, each webhook and operation: calls per Application and
// their latency as kube-apiserver timed them.
func renderWebhooks(results []result) string {
	var sb strings.Builder
	for _, r := range results {
		if len(r.webhooks) == 0 {
			continue
		}
		if sb.Len() == 0 {
			sb.WriteString("Admission webhook calls as kube-apiserver timed them (" + webhookLatencyMetric +
				"), first create to convergence; p50 and p99 interpolated in its buckets (5, 25, 100, 500 ms, ...):\n\n" +
				"| N | variant | webhook | type | operation | calls/app | mean | p50 | p99 |\n" +
				"|---:|---|---|---|---|---:|---:|---:|---:|\n")
		}
		keys := slices.SortedFunc(maps.Keys(r.webhooks), func(a, b webhookKey) int {
			return cmp.Or(strings.Compare(a.typ, b.typ), strings.Compare(a.name, b.name),
				strings.Compare(a.operation, b.operation))
		})
		for _, k := range keys {
			l := latencyOf(r.webhooks[k])
			fmt.Fprintf(&sb, "| %d | %s | %s | %s | %s | %.2f | %s | %s | %s |\n", r.n, r.name(), k.name,
				webhookType(k.typ), k.operation, float64(l.calls)/float64(r.n), ms(l.mean), ms(l.p50), ms(l.p99))
		}
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// sarKind is the request kind (parseRequests) of a SubjectAccessReview.
const sarKind = "POST subjectaccessreviews"

// renderAccess compares the operator's runs in each child access mode
// (-child-access) at each N: convergence, requests per Application, the
// SubjectAccessReviews among them, and the create latency of each type of
// admission webhook (the calls of all the operator's webhooks of that type
// merged: only the Application's are called here). Empty unless some N has
// the operator in more than one mode.
func renderAccess(results []result) string {
	ns, byN := resultsByN(results, func(r result) bool { return r.childAccess != "" })
	var sb strings.Builder
	for _, n := range ns {
		rs := byN[n]
		if len(rs) < 2 {
			continue
		}
		if sb.Len() == 0 {
			sb.WriteString("Access checks at admission, the operator in each spec.childAccess mode " +
				"(first create to convergence; webhook latency as kube-apiserver timed the creates, mean / p50 / p99):\n\n" +
				"| N | childAccess | converged in | create→Ready p50 | requests/app | SubjectAccessReviews/app " +
				"| validating webhook | mutating webhook |\n|---:|---|---:|---:|---:|---:|---:|---:|\n")
		}
		for _, r := range rs {
			var total float64
			for _, v := range r.requests {
				total += v
			}
			fmt.Fprintf(&sb, "| %d | %s | %.1f s | %s | %.1f | %.3f | %s | %s |\n", r.n, r.childAccess,
				r.converge.Seconds(), dur(r.p50), total/float64(n), r.requests[sarKind]/float64(n),
				createLatency(r.webhooks, "validating"), createLatency(r.webhooks, "mutating"))
		}
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// createLatency is "mean / p50 / p99" of the CREATE calls of the webhooks
// of type typ (webhookType: mutating or validating; their histograms summed,
// so each call weighs the same), or "-" when there were none.
func createLatency(webhooks map[webhookKey]*dto.Histogram, typ string) string {
	sum := &dto.Histogram{}
	for k, h := range webhooks {
		if webhookType(k.typ) == typ && k.operation == "CREATE" {
			sum = addHistograms(sum, h, 1)
		}
	}
	if sum.GetSampleCount() == 0 {
		return "-"
	}
	l := latencyOf(sum)
	return fmt.Sprintf("%s / %s / %s", ms(l.mean), ms(l.p50), ms(l.p99))
}
