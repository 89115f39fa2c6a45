//go:build release

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

package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// checkPublish publishes the release in dir to a registry and pulls it
// back, with the commands docs/releasing.md gives ("Making a release",
// step 4, and "Verifying a release"), run by the same oras and helm: the
// registry is go-containerregistry's, in this process, over plain HTTP
// (hence --plain-http and --to-plain-http, which a registry with TLS does
// not need), without the OCI referrers API: that registry's answers give an
// artifact the type of its config, not its own artifactType, so oras would
// find no SBOM; without the API oras keeps the index's referrers under the
// tag sha256-<index digest>, as with any registry lacking it. It checks
// the tag resolves to the layout's index digest, the index lists both
// platforms, the SBOM is found as the index's referrer and pulls as the
// released .cdx.json, and the pulled chart is the released .tgz, byte for
// byte (SHA256SUMS).
func checkPublish(t *testing.T, dir string, index, sbom v1.Hash) {
	oras := os.Getenv("ORAS")
	if oras == "" {
		t.Fatal("ORAS (the oras binary) is unset: run make test-release")
	}
	helm := os.Getenv("HELM")
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(false),
		registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	repo := host + "/release-test/" + name
	charts := "oci://" + host + "/release-test/charts"
	// helm's and oras's own configuration and caches, not the caller's.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(home, "helm-config"))
	t.Setenv("HELM_CACHE_HOME", filepath.Join(home, "helm-cache"))
	t.Setenv("HELM_DATA_HOME", filepath.Join(home, "helm-data"))

	// Publish (docs/releasing.md, step 4).
	run(t, dir, oras, "cp", "-r", "--to-plain-http", "--from-oci-layout", name+"-"+version+".oci.tar:"+version,
		repo+":"+version)
	run(t, dir, helm, "push", name+"-"+version+".tgz", charts, "--plain-http")

	// Verify (docs/releasing.md, "Verifying a release").
	if got := run(t, dir, oras, "resolve", "--plain-http", repo+":"+version); got != index.String() {
		t.Errorf("%s:%s resolves to %s, the layout's index is %s", repo, version, got, index)
	}
	var idx v1.IndexManifest
	fetched := run(t, dir, oras, "manifest", "fetch", "--plain-http", repo+":"+version)
	if err := json.Unmarshal([]byte(fetched), &idx); err != nil {
		t.Fatal(err)
	}
	platforms := make([]string, 0, len(idx.Manifests))
	for _, d := range idx.Manifests {
		if d.Platform != nil {
			platforms = append(platforms, d.Platform.String())
		}
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the pushed index lists %v, want %v", platforms, want)
	}

	discovered := run(t, dir, oras, "discover", "--plain-http", "--format", "json",
		"--artifact-type", "application/vnd.cyclonedx+json", repo+":"+version)
	var tree struct {
		Referrers []struct{ Digest, ArtifactType string }
	}
	if err := json.Unmarshal([]byte(discovered), &tree); err != nil {
		t.Fatalf("oras discover: %v\n%s", err, discovered)
	}
	if len(tree.Referrers) != 1 || tree.Referrers[0].Digest != sbom.String() {
		t.Fatalf("the index's SBOM referrers are %+v, want the layout's %s", tree.Referrers, sbom)
	}
	pulled := filepath.Join(t.TempDir(), "sbom")
	run(t, dir, oras, "pull", "--plain-http", "-o", pulled, repo+"@"+sbom.String())
	sameFile(t, filepath.Join(pulled, "sbom.cdx.json"), filepath.Join(dir, name+"-"+version+".cdx.json"))

	charted := t.TempDir()
	run(t, dir, helm, "pull", charts+"/"+name, "--version", version, "--plain-http", "--destination", charted)
	sameFile(t, filepath.Join(charted, name+"-"+version+".tgz"), filepath.Join(dir, name+"-"+version+".tgz"))
	t.Logf("published to %s and pulled back: index %s (linux/amd64, linux/arm64), SBOM referrer %s, chart %s",
		repo, index, sbom, charts+"/"+name+":"+version)
}

// sameFile fails unless got holds what want holds.
func sameFile(t *testing.T, got, want string) {
	t.Helper()
	sum := func(file string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
	if g, w := sum(got), sum(want); g != w {
		t.Errorf("%s (pulled) has digest %s, the release's %s has %s", got, g, filepath.Base(want), w)
	}
}
