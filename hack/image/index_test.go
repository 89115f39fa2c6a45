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

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// The index: one OCI image per platform, the SBOM artifact with the index as
// subject, and the same bytes when written twice. (make test-release checks
// the operator's own index and its module list.)
func TestIndex(t *testing.T) {
	binaries := []string{staticBinaryFor(t, "amd64"), staticBinaryFor(t, "arm64")}
	o := Options{Tag: "example.com/sunstrider-operator:1.2.3", Created: time.Unix(1764547200, 0).UTC(),
		Version: "1.2.3", Licenses: "Apache-2.0"}
	sbom, err := SBOM(binaries, o)
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	var res IndexResult
	for _, dir := range dirs {
		if res, err = WriteIndex(dir, o, binaries, sbom); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"index.json", "blobs/sha256/" + res.Index.Hex, "blobs/sha256/" + res.SBOM.Hex} {
		a, errA := os.ReadFile(filepath.Join(dirs[0], f))
		b, errB := os.ReadFile(filepath.Join(dirs[1], f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes (%v, %v)", f, errA, errB)
		}
	}

	checkIndexImages(t, dirs[0], res.Index)
	checkSBOMArtifact(t, dirs[0], res, sbom)

	if _, err := WriteIndex(filepath.Join(t.TempDir(), "c"), o, []string{binaries[0], binaries[0]}, sbom); err == nil ||
		!strings.Contains(err.Error(), "one binary per platform") {
		t.Errorf("two binaries of one platform: %v, want an error", err)
	}
}

// The tiny binary links no module: the BOM has the operator, the standard
// library of the Go that built it, and no serial number or other time.
func TestSBOM(t *testing.T) {
	o := Options{Created: time.Unix(1764547200, 0).UTC(), Version: "1.2.3", Licenses: "Apache-2.0"}
	bin := staticBinary(t)
	raw, err := SBOM([]string{bin}, o)
	if err != nil {
		t.Fatal(err)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(raw), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	if bom.SerialNumber != "" || bom.SpecVersion != cdx.SpecVersion1_6 || bom.Metadata == nil ||
		bom.Metadata.Timestamp != "2025-12-01T00:00:00Z" {
		t.Errorf("serial %q, spec %v, metadata %+v", bom.SerialNumber, bom.SpecVersion, bom.Metadata)
	}
	c := bom.Metadata.Component
	if c == nil || c.Name != "tiny" || c.Version != "1.2.3" || c.Type != cdx.ComponentTypeApplication {
		t.Errorf("the BOM's component %+v, want the application tiny 1.2.3", c)
	}
	goVersion := strings.TrimPrefix(runtime.Version(), "go")
	if bom.Components == nil || len(*bom.Components) != 1 || (*bom.Components)[0].Name != "stdlib" ||
		(*bom.Components)[0].PackageURL != "pkg:golang/stdlib@"+goVersion {
		t.Errorf("components %+v, want stdlib %s alone", bom.Components, goVersion)
	}
	if again, err := SBOM([]string{bin}, o); err != nil || !bytes.Equal(again, raw) {
		t.Errorf("a second SBOM of the same binary differs (%v)", err)
	}
	if _, err := SBOM([]string{filepath.Join(t.TempDir(), "none")}, o); err == nil {
		t.Error("the SBOM of a missing binary: no error")
	}
}

// checkIndexImages checks the index: OCI, one OCI image for linux/amd64, then
// one for linux/arm64.
func checkIndexImages(t *testing.T, dir string, index v1.Hash) {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := top.ImageIndex(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Errorf("the index is not valid: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex || len(im.Manifests) != 2 {
		t.Fatalf("index %s with %d manifests, want an OCI index of 2", im.MediaType, len(im.Manifests))
	}
	for i, arch := range []string{"amd64", "arm64"} {
		d := im.Manifests[i]
		if d.MediaType != types.OCIManifestSchema1 || d.Platform == nil || d.Platform.String() != "linux/"+arch {
			t.Errorf("manifest %d: %s for %v, want an OCI manifest for linux/%s", i, d.MediaType, d.Platform, arch)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if m.Config.MediaType != types.OCIConfigJSON || len(m.Layers) != 2 || m.Layers[0].MediaType != types.OCILayer {
			t.Errorf("linux/%s: config %s, layers %v; want OCI media types", arch, m.Config.MediaType, m.Layers)
		}
	}
}

// checkSBOMArtifact checks index.json lists the index, then the SBOM
// artifact: artifactType CycloneDX, the empty config, the index as subject.
func checkSBOMArtifact(t *testing.T, dir string, res IndexResult, sbom []byte) {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	top2, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(top2.Manifests) != 2 || top2.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "1.2.3" ||
		top2.Manifests[1].Digest != res.SBOM || top2.Manifests[1].ArtifactType != SBOMArtifactType {
		t.Fatalf("index.json lists %+v; want the index tagged 1.2.3, then the SBOM %s", top2.Manifests, res.SBOM)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", res.SBOM.Hex))
	if err != nil {
		t.Fatal(err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != SBOMArtifactType || m.Config.MediaType != types.OCIEmptyJSON || m.Subject == nil ||
		m.Subject.Digest != res.Index || m.Subject.MediaType != types.OCIImageIndex || len(m.Layers) != 1 {
		t.Fatalf("SBOM manifest %s; want artifactType %s, the empty config, subject the index %s",
			raw, SBOMArtifactType, res.Index)
	}
	layer, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", m.Layers[0].Digest.Hex))
	if err != nil || !bytes.Equal(layer, sbom) {
		t.Errorf("the SBOM artifact's layer is not the SBOM (%v)", err)
	}
}
