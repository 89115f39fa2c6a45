/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package metricstest reads metric values from a registry in tests.
package metricstest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Value returns the sum, over the series of the metric name in g whose
// labels include labels (name, value pairs), of their value: a counter's
// or gauge's value, a histogram's count of observations. A metric without
// such series is 0.
func Value(g prometheus.Gatherer, name string, labels ...string) (float64, error) {
	if len(labels)%2 != 0 {
		return 0, fmt.Errorf("labels must be name, value pairs: %q", labels)
	}
	families, err := g.Gather()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !matches(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum, nil
}

func matches(m *dto.Metric, labels []string) bool {
	for i := 0; i < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Names returns the names of the metric families g holds now.
func Names(g prometheus.Gatherer) ([]string, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(families))
	for _, f := range families {
		names = append(names, f.GetName())
	}
	return names, nil
}

// Dashboard is the part of a Grafana dashboard's JSON that queries.
type Dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// Queries returns the PromQL queries of the Grafana dashboard data, by
// panel title.
func Queries(data []byte) (map[string][]string, error) {
	var d Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	queries := map[string][]string{}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			queries[p.Title] = append(queries[p.Title], t.Expr)
		}
	}
	return queries, nil
}

var (
	promqlStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	// by, without, on, ignoring, group_left and group_right take a list of
	// label names, not metrics.
	promqlLabelLists = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlIdentifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlKeywords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true}
)

// MetricNames returns the names of the metrics a PromQL expression selects
// (what is neither a function, an aggregation, a keyword, a label name nor
// inside a string, label matcher or range), histogram suffixes kept.
func MetricNames(expr string) []string {
	expr = promqlStrings.ReplaceAllString(expr, `""`)
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlRanges.ReplaceAllString(expr, " ")
	expr = promqlLabelLists.ReplaceAllString(expr, " ")
	var names []string
	for _, m := range promqlIdentifier.FindAllStringSubmatchIndex(expr, -1) {
		if m[2] >= 0 { // followed by "(": a function or aggregation
			continue
		}
		if m[0] > 0 && (expr[m[0]-1] == '$' || expr[m[0]-1] == '.' || (expr[m[0]-1] >= '0' && expr[m[0]-1] <= '9')) {
			continue // a Grafana variable, a number's exponent or fraction
		}
		name := expr[m[0]:m[1]]
		if promqlKeywords[strings.ToLower(name)] {
			continue
		}
		names = append(names, name)
	}
	return names
}

// Served reports whether the metric name a query selects is one of the
// families served: the family itself, or a histogram's or summary's
// _bucket, _sum or _count series.
func Served(name string, families map[string]bool) bool {
	if families[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
			return true
		}
	}
	return false
}
