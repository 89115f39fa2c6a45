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

// The release's multi-arch image (`make release`, `-index`): one image per
// binary, each built as Build builds the single-arch one but with OCI media
// types, an OCI image index over them, and the SBOM of the binaries (sbom.go)
// as an OCI 1.1 artifact manifest whose subject is the index. All of it is
// written by go-containerregistry's layout package into an OCI image layout
// directory; the only hand-made JSON is the artifact manifest, which
// go-containerregistry has no builder for (v1.Manifest is its type, though).
//
// A registry that serves the OCI referrers API (or oras's fallback tag
// sha256-<index digest>) lists the SBOM under the index: `oras discover`,
// `oras cp -r` (which copies it with the index) and `regctl artifact list`
// read it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// SBOMArtifactType is the SBOM artifact's artifactType and its one layer's
// media type: CycloneDX JSON.
const SBOMArtifactType = "application/vnd.cyclonedx+json"

// IndexResult describes a written index.
type IndexResult struct {
	// Index is the image index's digest: what the release's tag names.
	Index v1.Hash
	// Images are the platforms' image manifests, in -binary order.
	Images []v1.Descriptor
	// SBOM is the digest of the SBOM artifact's manifest.
	SBOM v1.Hash
}

func runIndex(o Options, dir, sbomOut, created string) error {
	t, err := ParseTime(created)
	if err != nil {
		return err
	}
	o.Created = t
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists: the layout is written anew", dir)
	}
	sbom, err := SBOM(strings.Split(o.Binary, ","), o)
	if err != nil {
		return err
	}
	res, err := WriteIndex(dir, o, strings.Split(o.Binary, ","), sbom)
	if err != nil {
		return err
	}
	if sbomOut != "" {
		if err := os.WriteFile(sbomOut, sbom, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %s, index %s\n", dir, o.Tag, res.Index)
	for _, d := range res.Images {
		fmt.Printf("  %s/%s %s\n", d.Platform.OS, d.Platform.Architecture, d.Digest)
	}
	fmt.Printf("  SBOM (CycloneDX, subject the index) %s\n", res.SBOM)
	return nil
}

// WriteIndex writes an OCI image layout to dir: the index over one image per
// binary, named by o.Tag's tag (annotation org.opencontainers.image.ref.name),
// and the SBOM artifact whose subject is that index.
func WriteIndex(dir string, o Options, binaries []string, sbom []byte) (IndexResult, error) {
	ref, err := name.NewTag(o.Tag)
	if err != nil {
		return IndexResult{}, fmt.Errorf("tag %q: %w", o.Tag, err)
	}
	o.OCI = true
	var adds []mutate.IndexAddendum
	seen := map[string]string{}
	for _, bin := range binaries {
		o.Binary = bin
		img, platform, err := Build(o)
		if err != nil {
			return IndexResult{}, err
		}
		if prev, dup := seen[platform.String()]; dup {
			return IndexResult{}, fmt.Errorf("%s and %s are both %s: one binary per platform", prev, bin, platform)
		}
		seen[platform.String()] = bin
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	if len(adds) == 0 {
		return IndexResult{}, errors.New("no binary: an index needs one per platform")
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)

	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return IndexResult{}, fmt.Errorf("writing the layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.TagStr(),
		"io.containerd.image.name":          ref.Name(),
	})); err != nil {
		return IndexResult{}, fmt.Errorf("writing the index: %w", err)
	}

	var res IndexResult
	im, err := idx.IndexManifest()
	if err != nil {
		return IndexResult{}, err
	}
	res.Images = im.Manifests
	if res.Index, err = idx.Digest(); err != nil {
		return IndexResult{}, err
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return IndexResult{}, err
	}
	subject := v1.Descriptor{MediaType: types.OCIImageIndex, Size: int64(len(raw)), Digest: res.Index}
	if res.SBOM, err = appendSBOM(p, subject, sbom, o); err != nil {
		return IndexResult{}, fmt.Errorf("writing the SBOM artifact: %w", err)
	}
	return res, nil
}

// appendSBOM writes the SBOM as an OCI 1.1 artifact: artifactType
// SBOMArtifactType, the empty config, the SBOM as its one layer, and subject.
func appendSBOM(p layout.Path, subject v1.Descriptor, sbom []byte, o Options) (v1.Hash, error) {
	emptyConfig := []byte("{}")
	config, err := writeBlob(p, emptyConfig)
	if err != nil {
		return v1.Hash{}, err
	}
	layer, err := writeBlob(p, sbom)
	if err != nil {
		return v1.Hash{}, err
	}
	manifest, err := json.Marshal(v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  SBOMArtifactType,
		Config:        v1.Descriptor{MediaType: types.OCIEmptyJSON, Size: int64(len(emptyConfig)), Digest: config},
		Layers: []v1.Descriptor{{MediaType: SBOMArtifactType, Size: int64(len(sbom)), Digest: layer,
			Annotations: map[string]string{"org.opencontainers.image.title": "sbom.cdx.json"}}},
		Subject:     &subject,
		Annotations: map[string]string{"org.opencontainers.image.created": o.Created.Format(time.RFC3339)},
	})
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := writeBlob(p, manifest)
	if err != nil {
		return v1.Hash{}, err
	}
	return digest, p.AppendDescriptor(v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: int64(len(manifest)),
		Digest: digest, ArtifactType: SBOMArtifactType})
}

func writeBlob(p layout.Path, b []byte) (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(b))
	if err != nil {
		return v1.Hash{}, err
	}
	return h, p.WriteBlob(h, io.NopCloser(bytes.NewReader(b)))
}
