/*
Copyright 2026 The sunstrider operator authors.

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

package metrics_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// runbookBase is where the alerts' runbooks live: docs/troubleshooting.md
// as the documentation site serves it (the CSV's Documentation link).
const runbookBase = "https://sunstrider.cn/operator/docs/troubleshooting#"

// TestEveryAlertHasARunbook: every alert of the PrometheusRule (kustomize
// and chart copies) links, through runbook_url, to a section of
// docs/troubleshooting.md that exists.
func TestEveryAlertHasARunbook(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := markdownAnchors(string(doc))
	for _, file := range []string{"config/prometheus/rules/prometheusrule.yaml", "dist/chart/files/monitoring/prometheus-rules.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		var rules struct {
			Spec struct {
				Groups []promGroup `json:"groups"`
			} `json:"spec"`
			Groups []promGroup `json:"groups"`
		}
		if err := yaml.Unmarshal(data, &rules); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		alerts := 0
		for _, g := range append(rules.Spec.Groups, rules.Groups...) {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				alerts++
				url := r.Annotations["runbook_url"]
				anchor, ok := strings.CutPrefix(url, runbookBase)
				switch {
				case !ok:
					t.Errorf("%s: alert %s: runbook_url %q is not under %s", file, r.Alert, url, runbookBase)
				case !anchors[anchor]:
					t.Errorf("%s: alert %s: docs/troubleshooting.md has no section #%s", file, r.Alert, anchor)
				}
			}
		}
		if alerts == 0 {
			t.Errorf("%s: no alert found", file)
		}
	}
}

type promGroup struct {
	Rules []struct {
		Alert       string            `json:"alert"`
		Annotations map[string]string `json:"annotations"`
	} `json:"rules"`
}

// markdownAnchors returns the anchors GitHub (and most documentation
// sites) give the headings of doc: lower case, spaces as hyphens, other
// punctuation dropped.
func markdownAnchors(doc string) map[string]bool {
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	anchors := map[string]bool{}
	for line := range strings.SplitSeq(doc, "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		anchors[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(title), ""), " ", "-")] = true
	}
	return anchors
}
