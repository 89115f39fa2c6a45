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

// The image index's SBOM: the Go modules linked into the binaries, read
// from the build information the go command embeds in each (what
// `go version -m` prints, debug/buildinfo), as a CycloneDX 1.6 JSON BOM
// written by cyclonedx-go. Each module is a library component with its
// package URL (pkg:golang/<path>@<version>; a replaced module is listed as
// its replacement) and its go.sum hash as a property; the Go standard
// library is a component too (pkg:golang/stdlib), as scanners such as grype
// expect. The binary records which modules it links, not who requires whom,
// so the dependency graph is flat: the operator depends on each.
//
// The BOM has no serial number (a random UUID would change the digest of
// every build) and its timestamp is -created.

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// SBOM is the CycloneDX JSON BOM of the modules linked into binaries (one
// per platform: their module lists are merged; their Go versions must agree).
func SBOM(binaries []string, o Options) ([]byte, error) {
	var goVersion, mainPath string
	modules := map[string]cdx.Component{}
	for _, bin := range binaries {
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("reading the build information of %s: %w", bin, err)
		}
		if goVersion != "" && bi.GoVersion != goVersion {
			return nil, fmt.Errorf("%s is built with %s, another binary with %s", bin, bi.GoVersion, goVersion)
		}
		goVersion, mainPath = bi.GoVersion, bi.Main.Path
		for _, m := range bi.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			c := library(m.Path, m.Version)
			if m.Sum != "" {
				c.Properties = &[]cdx.Property{{Name: "go.sum", Value: m.Sum}}
			}
			modules[c.BOMRef] = c
		}
	}
	if mainPath == "" {
		return nil, fmt.Errorf("%v: no main module in the build information (not built by the go command?)", binaries)
	}
	stdlib := library("stdlib", strings.TrimPrefix(goVersion, "go"))
	modules[stdlib.BOMRef] = stdlib

	refs := slices.Sorted(maps.Keys(modules))
	components := make([]cdx.Component, 0, len(refs))
	for _, ref := range refs {
		components = append(components, modules[ref])
	}
	operator := cdx.Component{
		BOMRef: "pkg:golang/" + mainPath + "@" + o.Version, Type: cdx.ComponentTypeApplication,
		Name: mainPath, Version: o.Version, PackageURL: "pkg:golang/" + mainPath + "@" + o.Version,
	}
	if o.Licenses != "" {
		operator.Licenses = &cdx.Licenses{{Expression: o.Licenses}}
	}

	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Timestamp: o.Created.Format(time.RFC3339), Component: &operator}
	bom.Components = &components
	bom.Dependencies = &[]cdx.Dependency{{Ref: operator.BOMRef, Dependencies: &refs}}
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		return nil, fmt.Errorf("encoding the SBOM: %w", err)
	}
	return buf.Bytes(), nil
}

func library(path, version string) cdx.Component {
	purl := "pkg:golang/" + path + "@" + version
	return cdx.Component{BOMRef: purl, Type: cdx.ComponentTypeLibrary, Name: path, Version: version, PackageURL: purl}
}
