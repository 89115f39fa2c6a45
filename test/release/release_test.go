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

// Package release tests `make release` as a release manager runs it
// (docs/releasing.md), on a throwaway version in a clone of HEAD, so the
// work tree is left as it was: the first run prepares the tree, which the
// test commits and tags; two more runs build the artifacts into two
// directories. It checks the two SHA256SUMS are equal and true; the OCI
// layout's index, tagged with the version, has one image per platform
// (linux/amd64, linux/arm64) whose config says that platform; the SBOM
// artifact's subject is that index and it lists the binary's modules, among
// them controller-runtime at go.mod's version; and the one image, set from
// a non-default IMAGE_REPO, is what the chart (rendered), install.yaml and
// the CSV run, with the chart's version and appVersion the release's. Then
// it publishes the release to a registry and pulls it back as
// docs/releasing.md says (checkPublish).
//
// `make test-release` runs it (build tag release). The tools (kustomize,
// helm, controller-gen, oras) are the work tree's bin/, LOCALBIN.
package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"sigs.k8s.io/yaml"
)

const (
	// Newer than any release hack/previous-release names (the CSV replaces it).
	version   = "99.0.0-releasetest"
	imageRepo = "registry.example.com/release-test/sunstrider-operator"
	image     = imageRepo + ":" + version
	name      = "sunstrider-operator"
)

func TestRelease(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	localbin := os.Getenv("LOCALBIN")
	if localbin == "" {
		t.Fatal("LOCALBIN (the tools' folder) is unset: run make test-release")
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	// HEAD's commit, which a clone's checkout need not be (a detached HEAD).
	run(t, root, "git", "clone", "--quiet", "--no-checkout", root, src)
	run(t, src, "git", "fetch", "--quiet", root, "HEAD")
	run(t, src, "git", "checkout", "--quiet", "--detach", "FETCH_HEAD")
	changelog, err := os.OpenFile(filepath.Join(src, "CHANGELOG.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = changelog.WriteString("\n## [" + version + "] - 2026-12-02\n\n- make test-release's throwaway release.\n")
	if cerr := changelog.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	makeRelease := func(dir string) string {
		return run(t, src, "make", "--no-print-directory", "release", "VERSION="+version, "IMAGE_REPO="+imageRepo,
			"LOCALBIN="+localbin, "RELEASE_DIR="+dir)
	}
	out := makeRelease(filepath.Join(tmp, "unused"))
	if !strings.Contains(out, "Review and commit it") {
		t.Fatalf("the first make release did not stop for the release commit:\n%s", out)
	}
	run(t, src, "git", "add", "--all")
	run(t, src, "git", "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "--quiet",
		"-m", "Release "+version)
	run(t, src, "git", "tag", "v"+version)

	dirs := []string{filepath.Join(tmp, "a"), filepath.Join(tmp, "b")}
	for _, dir := range dirs {
		start := time.Now()
		makeRelease(dir)
		t.Logf("artifacts built into %s in %s", dir, time.Since(start).Round(time.Second))
	}
	if status := run(t, src, "git", "status", "--porcelain"); status != "" {
		t.Errorf("building the artifacts changed the tree:\n%s", status)
	}

	sums := checkSums(t, dirs[0])
	if other := checkSums(t, dirs[1]); !slices.Equal(sums, other) {
		t.Fatalf("two builds of one commit differ:\n%s\n%s", strings.Join(sums, "\n"), strings.Join(other, "\n"))
	}
	want := []string{"SHA256SUMS", "install.yaml", name + "-" + version + ".cdx.json", name + "-" + version + ".oci.tar",
		name + "-" + version + ".tgz", name + "-bundle-" + version + ".tar.gz"}
	if got := listDir(t, dirs[0]); !slices.Equal(got, want) {
		t.Errorf("artifacts %v, want %v", got, want)
	}

	dir := dirs[0]
	var index, sbom v1.Hash
	t.Run("image index and SBOM", func(t *testing.T) {
		index, sbom = checkIndex(t, dir, goModVersion(t, src, "sigs.k8s.io/controller-runtime"))
	})
	t.Run("one image everywhere", func(t *testing.T) { checkImages(t, dir) })
	t.Run("published and pulled back", func(t *testing.T) {
		if index == (v1.Hash{}) || sbom == (v1.Hash{}) {
			t.Fatal("no index or SBOM digest: the layout's check failed")
		}
		checkPublish(t, dir, index, sbom)
	})
}

// run runs a command in dir without the calling make's variables, and
// returns its output.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "VERSION", "IMG", "IMAGE_REPO", "RELEASE_DIR"}, k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkSums checks SHA256SUMS names every other file of dir with its true
// digest, and returns its lines.
func checkSums(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	named := make([]string, 0, len(lines))
	for _, line := range lines {
		sum, file, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("%s: SHA256SUMS line %q is not sha256sum's", dir, line)
		}
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: %s has digest %x, SHA256SUMS says %s", dir, file, got, sum)
		}
		named = append(named, file)
	}
	all := slices.DeleteFunc(listDir(t, dir), func(f string) bool { return f == "SHA256SUMS" })
	if !slices.Equal(named, all) {
		t.Errorf("%s: SHA256SUMS names %v, the folder has %v", dir, named, all)
	}
	return lines
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func goModVersion(t *testing.T, src, module string) string {
	t.Helper()
	v := run(t, src, "go", "list", "-m", "-f", "{{.Version}}", module)
	if !strings.HasPrefix(v, "v") {
		t.Fatalf("go list -m %s: %q", module, v)
	}
	return v
}

// checkIndex reads the OCI layout the way a registry client would, and
// returns the digests of the index tagged with the version and of its SBOM.
func checkIndex(t *testing.T, dir, controllerRuntime string) (index, sbom v1.Hash) {
	oci := filepath.Join(t.TempDir(), "oci")
	untar(t, filepath.Join(dir, name+"-"+version+".oci.tar"), oci, false)
	p, err := layout.FromPath(oci)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var indexDesc, sbomDesc *v1.Descriptor
	for i, d := range im.Manifests {
		switch {
		case d.Annotations["org.opencontainers.image.ref.name"] == version:
			indexDesc = &im.Manifests[i]
		case d.ArtifactType == "application/vnd.cyclonedx+json":
			sbomDesc = &im.Manifests[i]
		}
	}
	if indexDesc == nil || sbomDesc == nil {
		t.Fatalf("index.json has no index tagged %s or no SBOM artifact: %+v", version, im.Manifests)
	}

	idx, err := top.ImageIndex(indexDesc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	platforms := make([]string, 0, len(manifests.Manifests))
	for _, d := range manifests.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if d.Platform == nil || cf.OS+"/"+cf.Architecture != d.Platform.String() {
			t.Errorf("image %s: index says platform %v, its config %s/%s", d.Digest, d.Platform, cf.OS, cf.Architecture)
		}
		platforms = append(platforms, cf.OS+"/"+cf.Architecture)
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the index's images are for %v, want %v", platforms, want)
	}

	checkSBOM(t, dir, oci, sbomDesc.Digest, indexDesc.Digest, controllerRuntime)
	return indexDesc.Digest, sbomDesc.Digest
}

// checkSBOM checks the SBOM artifact's subject is the index and its BOM (the
// .cdx.json file too) names the operator and controller-runtime's version.
func checkSBOM(t *testing.T, dir, oci string, sbom, index v1.Hash, controllerRuntime string) {
	raw, err := os.ReadFile(filepath.Join(oci, "blobs", "sha256", sbom.Hex))
	if err != nil {
		t.Fatal(err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject == nil || m.Subject.Digest != index || len(m.Layers) != 1 {
		t.Fatalf("the SBOM artifact's subject is %v (want the index %s), layers %v", m.Subject, index, m.Layers)
	}
	bom, err := os.ReadFile(filepath.Join(oci, "blobs", "sha256", m.Layers[0].Digest.Hex))
	if err != nil {
		t.Fatal(err)
	}
	if file, err := os.ReadFile(filepath.Join(dir, name+"-"+version+".cdx.json")); err != nil || !bytes.Equal(file, bom) {
		t.Errorf("%s.cdx.json is not the attached SBOM (%v)", name+"-"+version, err)
	}
	var b cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(bom), cdx.BOMFileFormatJSON).Decode(&b); err != nil {
		t.Fatal(err)
	}
	if b.Metadata == nil || b.Metadata.Component == nil || b.Metadata.Component.Version != version {
		t.Errorf("the SBOM's component is not the operator %s: %+v", version, b.Metadata)
	}
	found := false
	for _, c := range *b.Components {
		found = found || (c.Name == "sigs.k8s.io/controller-runtime" && c.Version == controllerRuntime)
	}
	if !found {
		t.Errorf("the SBOM's %d components lack sigs.k8s.io/controller-runtime %s", len(*b.Components), controllerRuntime)
	}
}

// checkImages checks the chart (as helm renders it), install.yaml and the
// CSV run the one image, and the chart's version and appVersion.
func checkImages(t *testing.T, dir string) {
	chartDir := t.TempDir()
	untar(t, filepath.Join(dir, name+"-"+version+".tgz"), chartDir, true)
	var chart struct{ Version, AppVersion string }
	unmarshalFile(t, filepath.Join(chartDir, name, "Chart.yaml"), &chart)
	if chart.Version != version || chart.AppVersion != version {
		t.Errorf("chart version %q, appVersion %q, want %s", chart.Version, chart.AppVersion, version)
	}
	helm := os.Getenv("HELM")
	rendered := run(t, dir, helm, "template", "x", filepath.Join(dir, name+"-"+version+".tgz"),
		"--kube-version", "1.37.0", "--skip-tests")
	if got := deploymentImages(t, rendered); !slices.Equal(got, []string{image}) {
		t.Errorf("the chart's Deployment runs %v, want %s", got, image)
	}

	install, err := os.ReadFile(filepath.Join(dir, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := deploymentImages(t, string(install)); !slices.Equal(got, []string{image}) {
		t.Errorf("install.yaml's Deployment runs %v, want %s", got, image)
	}

	bundle := t.TempDir()
	untar(t, filepath.Join(dir, name+"-bundle-"+version+".tar.gz"), bundle, true)
	var csv struct {
		Metadata struct{ Annotations map[string]string }
		Spec     struct {
			Version string
			Install struct {
				Spec struct {
					Deployments []struct {
						Spec struct{ Template podTemplate }
					}
				}
			}
		}
	}
	unmarshalFile(t, filepath.Join(bundle, "bundle", "manifests", name+".clusterserviceversion.yaml"), &csv)
	var csvImages []string
	for _, d := range csv.Spec.Install.Spec.Deployments {
		csvImages = append(csvImages, d.Spec.Template.images()...)
	}
	if len(csvImages) == 0 || slices.ContainsFunc(csvImages, func(s string) bool { return s != image }) ||
		csv.Metadata.Annotations["containerImage"] != image || csv.Spec.Version != version {
		t.Errorf("the CSV (version %s) runs %v, containerImage %q; want %s, version %s",
			csv.Spec.Version, csvImages, csv.Metadata.Annotations["containerImage"], image, version)
	}
}

type podTemplate struct {
	Spec struct {
		InitContainers, Containers []struct{ Image string }
	}
}

func (p podTemplate) images() []string {
	containers := append(p.Spec.InitContainers, p.Spec.Containers...)
	images := make([]string, 0, len(containers))
	for _, c := range containers {
		images = append(images, c.Image)
	}
	return images
}

// deploymentImages are the images of the Deployments in a YAML stream,
// once each, sorted.
func deploymentImages(t *testing.T, stream string) []string {
	t.Helper()
	var images []string
	for doc := range strings.SplitSeq(stream, "\n---") {
		var obj struct {
			Kind string
			Spec struct{ Template podTemplate }
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if obj.Kind == "Deployment" {
			images = append(images, obj.Spec.Template.images()...)
		}
	}
	slices.Sort(images)
	return slices.Compact(images)
}

func unmarshalFile(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// untar extracts a (gzip'd) tar into dir, checking what reproducibility
// needs of each entry: owner 0:0 and one modification time.
func untar(t *testing.T, archive, dir string, gzipped bool) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = bufio.NewReader(f)
	if gzipped {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		if !zr.ModTime.IsZero() || zr.Name != "" {
			t.Errorf("%s: gzip records name %q, time %v", archive, zr.Name, zr.ModTime)
		}
		r = zr
	}
	tr := tar.NewReader(r)
	var mtime time.Time
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if mtime.IsZero() {
			mtime = h.ModTime
		}
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(mtime) {
			t.Errorf("%s: %s is %d:%d, modified %v (the first entry %v)", archive, h.Name, h.Uid, h.Gid, h.ModTime, mtime)
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(os.PathSeparator)) {
			t.Fatalf("%s: entry %s outside the archive", archive, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
					err = os.WriteFile(target, data, 0o644)
				}
			}
		default:
			t.Fatalf("%s: %s is of type %c", archive, h.Name, h.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
