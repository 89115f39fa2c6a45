//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestManagerVersionNamesThisBuild runs `manager --version` on the binary
// make build linked (the Makefile's LDFLAGS: VERSION, the commit, git
// describe): it must name the release in the VERSION file and this commit,
// as the build_info metric and the release artifacts do. A variable renamed
// in internal/version would leave -X without effect and the binary
// "(devel)" or unknown; internal/version's table tests cover how the three
// parts combine.
func TestManagerVersionNamesThisBuild(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	release := strings.TrimSpace(string(data))
	revision := strings.TrimSpace(mustSh(t, nil, "git", "rev-parse", "HEAD"))
	describe := strings.TrimSpace(mustSh(t, nil, "git", "describe", "--tags", "--always", "--dirty"))
	dirty := strings.HasSuffix(describe, "-dirty")
	tagged := strings.TrimSuffix(describe, "-dirty") == "v"+release
	version := release
	if !tagged || dirty {
		version += "+" + revision[:7]
	}
	if dirty {
		version += ".dirty"
	}
	want := fmt.Sprintf("sunstrider-operator %s (revision %s, %s, %s/%s)\n",
		version, revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if got := mustSh(t, nil, manager, "--version"); got != want {
		t.Errorf("%s --version printed %q; want %q (make build's LDFLAGS)", manager, got, want)
	}
}
