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

// Package version names the build of the operator: the release's semantic
// version and the git commit it was built from. `make build`, `make run`,
// `make image` and `make docker-build` set them at link time (the Makefile's LDFLAGS):
//
//	-X sunstrider.cn/operator/internal/version.Version=$(VERSION)      # the VERSION file, e.g. 0.2.0
//	-X sunstrider.cn/operator/internal/version.Revision=$(REVISION)    # git rev-parse HEAD
//	-X sunstrider.cn/operator/internal/version.gitDescribe=$(GIT_DESCRIBE) # git describe --tags --always --dirty
//
// At start-up Version becomes the build's version: the release alone for a
// clean checkout of its tag (v0.2.0 gives "0.2.0"), otherwise the release
// with the commit as semver build metadata, "0.2.0+29d4ee3" or
// "0.2.0+29d4ee3.dirty" for a working tree with uncommitted changes.
// A binary built without LDFLAGS (go build, go test) is "0.0.0-dev" with the
// commit go build recorded, if any.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Unreleased is the version of a binary built without a release version.
const Unreleased = "0.0.0-dev"

// Unknown is the Revision of a binary built outside a git checkout without LDFLAGS.
const Unknown = "unknown"

var (
	// Version is the operator's semantic version, build metadata included
	// (see the package documentation). The linker sets the release part.
	Version = ""
	// Revision is the full git commit the operator was built from.
	Revision = ""
	// gitDescribe is `git describe --tags --always --dirty` at build time.
	gitDescribe = ""
)

func init() {
	Version, Revision = resolve(Version, Revision, gitDescribe, vcsRevision)
}

// resolve is the build's version and revision from what the linker set: the
// release, the commit and git describe; vcs is what go build recorded, for a
// binary built without LDFLAGS.
func resolve(release, revision, describe string, vcs func() (string, bool)) (string, string) {
	tagged, dirty := describes(release, describe)
	if revision == "" {
		// go build (not go run or go test) records the commit of a git checkout.
		revision, dirty = vcs()
	}
	version := buildVersion(release, revision, tagged, dirty)
	if revision == "" {
		revision = Unknown
	}
	return version, revision
}

// describes reads `git describe --tags --always --dirty`: tagged when the
// commit is the release's tag v<release> itself, dirty when the working tree
// had uncommitted changes.
func describes(release, describe string) (tagged, dirty bool) {
	dirty = strings.HasSuffix(describe, "-dirty")
	tagged = release != "" && strings.TrimSuffix(describe, "-dirty") == "v"+release
	return tagged, dirty
}

// buildVersion is the release, with the commit's short hash and "dirty" as
// semver build metadata unless the build is the clean tagged release.
func buildVersion(release, revision string, tagged, dirty bool) string {
	if release == "" {
		release, tagged = Unreleased, false
	}
	var metadata []string
	if !tagged || dirty {
		if revision != "" && revision != Unknown {
			metadata = append(metadata, shortRevision(revision))
		}
	}
	if dirty {
		metadata = append(metadata, "dirty")
	}
	if len(metadata) == 0 {
		return release
	}
	return release + "+" + strings.Join(metadata, ".")
}

// shortRevision is git's default abbreviation of a commit, 7 hex digits.
func shortRevision(revision string) string {
	const abbrev = 7
	if len(revision) > abbrev {
		return revision[:abbrev]
	}
	return revision
}

// vcsRevision is the commit and modified flag go build recorded, if any.
func vcsRevision() (revision string, dirty bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return revision, dirty
}

// String is the version line `manager --version` prints.
func String() string {
	return fmt.Sprintf("sunstrider-operator %s (revision %s, %s, %s/%s)",
		Version, Revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// NewBuildInfoCollector is the sunstrider_operator_build_info gauge: always
// 1, labelled with the version, revision and Go version, so dashboards and
// alerts can join any metric to the build that exported it.
func NewBuildInfoCollector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sunstrider_operator_build_info",
		Help: "The operator's build: version, git revision and Go version. Always 1.",
		ConstLabels: prometheus.Labels{
			"version":   Version,
			"revision":  Revision,
			"goversion": runtime.Version(),
		},
	})
	g.Set(1)
	return g
}
