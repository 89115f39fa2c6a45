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

package version

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// semver is semver.org's regular expression for a version (2.0.0).
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

const sha = "29d4ee32bb522603ef2281608d1c18862d4e5268"

func TestResolve(t *testing.T) {
	noVCS := func() (string, bool) { return "", false }
	tests := []struct {
		name                        string
		release, revision, describe string
		vcs                         func() (string, bool)
		wantVersion, wantRevision   string
	}{
		{"clean checkout of the release's tag", "0.2.0", sha, "v0.2.0", noVCS, "0.2.0", sha},
		{"the release's tag with uncommitted changes", "0.2.0", sha, "v0.2.0-dirty", noVCS, "0.2.0+29d4ee3.dirty", sha},
		{"commits after the previous release's tag", "0.2.0", sha, "v0.1.0-25-g29d4ee3", noVCS, "0.2.0+29d4ee3", sha},
		{"commits after a tag, dirty", "0.2.0", sha, "v0.1.0-25-g29d4ee3-dirty", noVCS, "0.2.0+29d4ee3.dirty", sha},
		{"no tag in the clone", "0.2.0", sha, "29d4ee3", noVCS, "0.2.0+29d4ee3", sha},
		{"no tag in the clone, dirty", "0.2.0", sha, "29d4ee3-dirty", noVCS, "0.2.0+29d4ee3.dirty", sha},
		{"another release's tag is not this release", "0.2.0", sha, "v0.2.0-rc.1", noVCS, "0.2.0+29d4ee3", sha},
		{"a pre-release", "0.3.0-rc.1", sha, "v0.3.0-rc.1", noVCS, "0.3.0-rc.1", sha},
		{"no git at build time (docker build without build args)", "0.2.0", "", "", noVCS, "0.2.0", Unknown},
		{"go build without LDFLAGS in a checkout", "", "", "",
			func() (string, bool) { return sha, false }, "0.0.0-dev+29d4ee3", sha},
		{"go build without LDFLAGS in a dirty checkout", "", "", "",
			func() (string, bool) { return sha, true }, "0.0.0-dev+29d4ee3.dirty", sha},
		{"go test: nothing known", "", "", "", noVCS, Unreleased, Unknown},
		{"a tag without a release version is no release", "", sha, "v", noVCS, "0.0.0-dev+29d4ee3", sha},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, revision := resolve(tt.release, tt.revision, tt.describe, tt.vcs)
			if version != tt.wantVersion || revision != tt.wantRevision {
				t.Errorf("resolve(%q, %q, %q) = %q, %q; want %q, %q", tt.release, tt.revision, tt.describe,
					version, revision, tt.wantVersion, tt.wantRevision)
			}
			if !semver.MatchString(version) {
				t.Errorf("version %q is not a semantic version", version)
			}
		})
	}
}

// The VERSION file holds a plain version, as make release (x.y.z) or make
// bump-dev (x.y.z-dev, between releases) writes it, and the files they write
// with it agree: the Helm chart's version and appVersion (its default image
// tag), the image config/manager's kustomization names (repository and tag)
// and the chart's image.repository, and CHANGELOG.md's section (for a -dev
// version, its Unreleased section: docs/releasing.md).
func TestReleaseFiles(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	file := read("VERSION")
	v := strings.TrimSpace(file)
	if !semver.MatchString(v) || strings.Contains(v, "+") || file != v+"\n" {
		t.Fatalf("VERSION holds %q; want one line x.y.z[-pre-release], no build metadata", file)
	}
	chart := strings.Split(read(filepath.Join("dist", "chart", "Chart.yaml")), "\n")
	for _, want := range []string{"version: " + v, `appVersion: "` + v + `"`} {
		if !slices.Contains(chart, want) {
			t.Errorf("dist/chart/Chart.yaml has no line %q (make release VERSION=%s writes it)", want, v)
		}
	}
	kustomization := read(filepath.Join("config", "manager", "kustomization.yaml"))
	repo := regexp.MustCompile(`(?m)^  newName: (\S+)\n  newTag: (\S+)$`).FindStringSubmatch(kustomization)
	if repo == nil || repo[2] != v {
		t.Errorf("config/manager/kustomization.yaml names image %v, want tag %s (make bump-dev or make release writes it)",
			repo, v)
	} else if values := read(filepath.Join("dist", "chart", "values.yaml")); !strings.Contains(values,
		"\nimage:\n  repository: "+repo[1]+"\n") {
		t.Errorf("dist/chart/values.yaml's image.repository is not %s, config/manager's image", repo[1])
	}
	section := regexp.QuoteMeta(v)
	if strings.HasSuffix(v, "-dev") {
		section = "Unreleased"
	}
	heading := regexp.MustCompile(`(?m)^## \[` + section + `\]( - \d{4}-\d{2}-\d{2})?\s*$`)
	if !heading.MatchString(read("CHANGELOG.md")) {
		t.Errorf("CHANGELOG.md has no section ## [%s]", section)
	}
}

func TestBuildInfoCollector(t *testing.T) {
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(NewBuildInfoCollector())
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 || families[0].GetName() != "sunstrider_operator_build_info" ||
		len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v; want one sunstrider_operator_build_info", families)
	}
	m := families[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": Version, "revision": Revision, "goversion": runtime.Version()}
	if len(labels) != len(want) || labels["version"] != want["version"] ||
		labels["revision"] != want["revision"] || labels["goversion"] != want["goversion"] {
		t.Errorf("labels %v; want %v", labels, want)
	}
	if m.GetGauge().GetValue() != 1 {
		t.Errorf("value %v; want 1", m.GetGauge().GetValue())
	}
}
