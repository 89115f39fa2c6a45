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

// Command image builds the operator's container image without a container
// engine, a base image or a registry (`make image`): FROM scratch, a static
// binary, and the few files of gcr.io/distroless/static:nonroot the operator
// needs. `make test-images` packs the same way the real node's test workload
// (test/app, -entrypoint /app) and its pod sandbox image (hack/pause,
// -entrypoint /pause).
//
// The image has two layers:
//
//   - the base: /etc/passwd and /etc/group with root, nobody and nonroot
//     (65532), /home/nonroot, a world-writable /tmp (the manager's default
//     --webhook-cert-path is under it; the Deployment mounts emptyDirs there
//     anyway, its root filesystem being read-only) and, when -ca-certs names
//     a file, /etc/ssl/certs/ca-certificates.crt;
//   - the binary: -entrypoint (default /manager), mode 0755, owned by root.
//
// No shell, no package manager, no other file. The image runs as
// 65532:65532 with the binary as its entrypoint and carries the
// org.opencontainers.image.* labels. Every timestamp is -created (make uses
// SOURCE_DATE_EPOCH, the commit's time), so the same binary gives the same
// image, byte for byte, digest for digest.
//
// The output is one tar file that is at the same time an OCI image layout
// (oci-layout, index.json, blobs/sha256/...) and a `docker save` archive
// (manifest.json naming the same blobs), as `docker save` writes since
// Docker 25: `docker load`, `podman load`, `ctr images import`,
// `kind load image-archive` and `crane push` all read it. The manifest uses
// Docker's schema 2 media types, because `crane push` of a docker archive
// always pushes those: the manifest digest index.json names is then the
// digest the registry gets, printed by this command.
//
// With -rootfs-out FILE it writes, besides -out or instead of it, the files
// of the image's layers as one plain (uncompressed) tar: the base layer's
// entries, then the binary, each with the layer's header (mode, owner,
// -created as mtime) and content. The Dockerfile ADDs it to scratch
// (`make docker-build`), so a container engine builds an image with the
// same files as the archive's, and no base image to pull, pin or patch.
//
// With -index DIR and a comma-separated -binary, one per platform, it writes
// instead the release's multi-arch image (`make release`, index.go): an OCI
// image layout directory holding an OCI index over one image per binary
// (OCI media types) and their SBOM (sbom.go) attached to the index.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// NonRoot is distroless's "nonroot" user and group.
	NonRoot = 65532
	// Entrypoint is where the binary is in the image unless
	// Options.Entrypoint (-entrypoint) says otherwise.
	Entrypoint = "/manager"
	// CACertsPath is where the CA certificates are in the image (Go's
	// crypto/x509 looks there first on Linux).
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"

	labelPrefix = "org.opencontainers.image."
)

// Options are what the image is built from.
type Options struct {
	// Binary is the static Linux executable that becomes Entrypoint.
	Binary string
	// Entrypoint is the absolute path of the binary in the image, its
	// entrypoint; empty for the constant Entrypoint (/manager).
	Entrypoint string
	// CACerts is a PEM bundle copied to CACertsPath; empty for none.
	CACerts string
	// Tag names the image in the archive (manifest.json's RepoTags,
	// index.json's ref name), e.g. sunstrider-operator:0.2.0.
	Tag string
	// Created is every timestamp of the image: config, history, files.
	Created time.Time
	// Title, Description, Source, Licenses, Version and Revision become the
	// org.opencontainers.image.* labels; an empty one is left out.
	Title, Description, Source, Licenses, Version, Revision string
	// OCI gives the manifest, config and layers OCI media types (an image of
	// an index, index.go) instead of Docker's schema 2 (a docker save archive).
	OCI bool
}

// Result describes a written image.
type Result struct {
	// Digest is the manifest's digest: what a registry stores the image under.
	Digest v1.Hash
	// ImageID is the config's digest (docker's image ID).
	ImageID v1.Hash
	// Platform is the binary's, e.g. linux/amd64.
	Platform v1.Platform
	// Size is the sum of the compressed layers.
	Size int64
}

func main() {
	var o Options
	var out, rootfsOut, index, sbomOut, created string
	flag.StringVar(&o.Binary, "binary", "bin/image/manager",
		"static Linux binary (CGO_ENABLED=0) that becomes -entrypoint"+
			"; with -index, a comma-separated list, one per platform")
	flag.StringVar(&o.Entrypoint, "entrypoint", Entrypoint,
		"absolute path of the binary in the image, the image's entrypoint (e.g. /app)")
	flag.StringVar(&o.CACerts, "ca-certs", "",
		"PEM bundle copied to "+CACertsPath+" (e.g. /etc/ssl/certs/ca-certificates.crt; empty: none)")
	flag.StringVar(&o.Tag, "tag", "sunstrider-operator:dev", "the image's name in the archive")
	flag.StringVar(&out, "out", "", "the archive to write (an OCI image layout and docker save tar)")
	flag.StringVar(&rootfsOut, "rootfs-out", "",
		"besides -out or instead of it: a plain tar of the files of the image's layers to write (what the Dockerfile ADDs)")
	flag.StringVar(&index, "index", "",
		"instead of -out: the OCI image layout directory to write, an index over -binary's images and their SBOM (index.go)")
	flag.StringVar(&sbomOut, "sbom-out", "", "with -index: also write the SBOM to this file")
	flag.StringVar(&created, "created", "0",
		"every timestamp of the image, as seconds since the epoch (SOURCE_DATE_EPOCH) or RFC 3339")
	flag.StringVar(&o.Title, "title", "sunstrider-operator", "label "+labelPrefix+"title")
	flag.StringVar(&o.Description, "description", "", "label "+labelPrefix+"description")
	flag.StringVar(&o.Source, "source", "", "label "+labelPrefix+"source (URL of the source repository)")
	flag.StringVar(&o.Licenses, "licenses", "Apache-2.0", "label "+labelPrefix+"licenses (SPDX expression)")
	flag.StringVar(&o.Version, "version", "", "label "+labelPrefix+"version")
	flag.StringVar(&o.Revision, "revision", "", "label "+labelPrefix+"revision (the git commit)")
	flag.Parse()

	run := func() error { return run(o, out, rootfsOut, created) }
	if index != "" {
		run = func() error { return runIndex(o, index, sbomOut, created) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o Options, out, rootfsOut, created string) error {
	if out == "" && rootfsOut == "" {
		return errors.New("-out or -rootfs-out is required")
	}
	t, err := ParseTime(created)
	if err != nil {
		return err
	}
	o.Created = t
	// One build for both outputs: the rootfs is then the archive's layers,
	// not a second build's that could differ.
	img, platform, err := Build(o)
	if err != nil {
		return err
	}
	if out != "" {
		var res Result
		if err := writeFile(out, func(w io.Writer) (err error) {
			res, err = writeBuilt(w, img, platform, o)
			return err
		}); err != nil {
			return err
		}
		fmt.Printf("%s: %s %s/%s, %.1f MB compressed\n  digest   %s\n  image ID %s\n",
			out, o.Tag, res.Platform.OS, res.Platform.Architecture, float64(res.Size)/1e6, res.Digest, res.ImageID)
	}
	if rootfsOut != "" {
		if err := writeFile(rootfsOut, func(w io.Writer) error { return WriteRootfs(w, img) }); err != nil {
			return err
		}
		fmt.Printf("%s: the files of the image's layers, %s/%s\n", rootfsOut, platform.OS, platform.Architecture)
	}
	return nil
}

// writeFile writes file through a temporary file renamed into place, so a
// failed or interrupted build leaves no partial file under that name.
func writeFile(file string, write func(io.Writer) error) error {
	if err := os.MkdirAll(path.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.Rename(tmp, file)
}

// ParseTime reads seconds since the epoch (SOURCE_DATE_EPOCH) or RFC 3339.
func ParseTime(s string) (time.Time, error) {
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(secs, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("-created %q: neither seconds since the epoch nor RFC 3339", s)
	}
	return t.UTC(), nil
}

// Write builds the image and writes it to w as an OCI image layout that is
// also a docker save archive.
func Write(w io.Writer, o Options) (Result, error) {
	img, platform, err := Build(o)
	if err != nil {
		return Result{}, err
	}
	return writeBuilt(w, img, platform, o)
}

// writeBuilt writes img, built by Build from o, as Write does.
func writeBuilt(w io.Writer, img v1.Image, platform v1.Platform, o Options) (Result, error) {
	res := Result{Platform: platform}
	var err error
	if res.Digest, err = img.Digest(); err != nil {
		return Result{}, err
	}
	if res.ImageID, err = img.ConfigName(); err != nil {
		return Result{}, err
	}
	layers, err := img.Layers()
	if err != nil {
		return Result{}, err
	}
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return Result{}, err
		}
		res.Size += n
	}
	return res, writeArchive(w, img, o.Tag, platform, o.Created)
}

// Build assembles the image in memory.
func Build(o Options) (v1.Image, v1.Platform, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, v1.Platform{}, err
	}
	platform, err := StaticPlatform(bin)
	if err != nil {
		return nil, v1.Platform{}, fmt.Errorf("%s: %w", o.Binary, err)
	}
	entrypoint, err := entrypointPath(o.Entrypoint)
	if err != nil {
		return nil, v1.Platform{}, err
	}
	var certs []byte
	if o.CACerts != "" {
		if certs, err = os.ReadFile(o.CACerts); err != nil {
			return nil, v1.Platform{}, err
		}
	}

	layerType := types.DockerLayer
	if o.OCI {
		layerType = types.OCILayer
	}
	base, err := layer(baseFiles(certs), o.Created, layerType)
	if err != nil {
		return nil, v1.Platform{}, err
	}
	app, err := layer([]file{{name: entrypoint, mode: 0o755, data: bin}}, o.Created, layerType)
	if err != nil {
		return nil, v1.Platform{}, err
	}
	created := v1.Time{Time: o.Created}
	baseHistory := "hack/image: /etc/passwd, /etc/group (nonroot 65532), /home/nonroot, /tmp"
	if certs != nil {
		baseHistory += ", " + CACertsPath
	}
	img, err := mutate.Append(empty.Image,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: baseHistory,
			Comment: "the files of distroless/static:nonroot the operator needs"}},
		mutate.Addendum{Layer: app, History: v1.History{Created: created, CreatedBy: "hack/image: " + entrypoint}},
	)
	if err != nil {
		return nil, v1.Platform{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, v1.Platform{}, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Variant = platform.Architecture, platform.OS, platform.Variant
	cf.Created = created
	cf.Author = ""
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", NonRoot, NonRoot),
		Entrypoint: []string{entrypoint},
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Labels:     labels(o),
	}
	if certs != nil {
		cf.Config.Env = append(cf.Config.Env, "SSL_CERT_FILE="+CACertsPath)
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, v1.Platform{}, err
	}
	if o.OCI {
		img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	return img, platform, nil
}

// WriteRootfs writes the files of img's layers, layer after layer, to w as
// one uncompressed tar, each entry with its header (name, type, mode, owner,
// mtime) and content as the layer has it. The Dockerfile ADDs it to scratch:
// the engine unpacks it keeping modes and owners, which gives the image the
// files of img. Build's layers never hold the same path twice and have no
// whiteouts, so their entries one after the other are the image's
// filesystem.
func WriteRootfs(w io.Writer, img v1.Image) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, l := range layers {
		if err := copyEntries(tw, l); err != nil {
			return err
		}
	}
	return tw.Close()
}

func copyEntries(tw *tar.Writer, l v1.Layer) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a layer: %w", err)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}

// entrypointPath checks -entrypoint: an absolute path to a file directly
// under / (the base layer's directories are not to be replaced by the binary),
// Entrypoint when empty.
func entrypointPath(p string) (string, error) {
	if p == "" {
		return Entrypoint, nil
	}
	dir, base := path.Split(p)
	if dir != "/" || base == "" || base == "." || base == ".." || path.Clean(p) != p {
		return "", fmt.Errorf("-entrypoint %q: want a file directly under /, e.g. /app", p)
	}
	for _, f := range baseFiles([]byte{}) {
		if strings.HasPrefix(f.name, base+"/") {
			return "", fmt.Errorf("-entrypoint %q is a directory of the base layer", p)
		}
	}
	return p, nil
}

func labels(o Options) map[string]string {
	l := map[string]string{}
	for k, v := range map[string]string{
		"title": o.Title, "description": o.Description, "source": o.Source, "licenses": o.Licenses,
		"version": o.Version, "revision": o.Revision, "created": o.Created.Format(time.RFC3339),
	} {
		if v != "" {
			l[labelPrefix+k] = v
		}
	}
	return l
}

// ELF machines and the GOARCH (image architecture) of each.
var architectures = map[elf.Machine]string{
	elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_ARM: "arm",
	elf.EM_S390: "s390x", elf.EM_PPC64: "ppc64le", elf.EM_RISCV: "riscv64", elf.EM_LOONGARCH: "loong64",
}

// StaticPlatform checks that bin is a statically linked Linux executable (the
// image has no libc and no dynamic loader) and returns its platform.
func StaticPlatform(bin []byte) (v1.Platform, error) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return v1.Platform{}, fmt.Errorf("not an ELF executable (the image runs a Linux binary): %w", err)
	}
	defer func() { _ = f.Close() }()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return v1.Platform{}, fmt.Errorf("ELF type %v is not an executable", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return v1.Platform{}, errors.New("dynamically linked (it has an ELF interpreter): " +
				"the image has no libc, build it with CGO_ENABLED=0")
		}
	}
	arch, ok := architectures[f.Machine]
	if !ok || (f.Machine == elf.EM_PPC64 && f.ByteOrder.String() != "LittleEndian") {
		return v1.Platform{}, fmt.Errorf("unsupported ELF machine %v", f.Machine)
	}
	p := v1.Platform{OS: "linux", Architecture: arch}
	if arch == "arm" {
		p.Variant = "v7"
	}
	return p, nil
}

// file is one entry of a layer; a name ending in "/" is a directory.
type file struct {
	name     string
	mode     int64
	uid, gid int
	data     []byte
}

// baseFiles are distroless/static:nonroot's users and groups, home and /tmp.
func baseFiles(certs []byte) []file {
	files := []file{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644,
			data: []byte("root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
	}
	if certs != nil {
		files = append(files,
			file{name: "etc/ssl/", mode: 0o755},
			file{name: "etc/ssl/certs/", mode: 0o755},
			file{name: strings.TrimPrefix(CACertsPath, "/"), mode: 0o644, data: certs})
	}
	return append(files,
		file{name: "home/", mode: 0o755},
		file{name: "home/nonroot/", mode: 0o700, uid: NonRoot, gid: NonRoot},
		file{name: "tmp/", mode: 0o1777},
	)
}

// layer is a gzip-compressed tar of files, every timestamp mtime. It is
// compressed once, here: the layer then only decompresses it for its diff ID.
func layer(files []file, mtime time.Time, mediaType types.MediaType) (v1.Layer, error) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	for _, f := range files {
		h := &tar.Header{Name: strings.TrimPrefix(f.name, "/"), Mode: f.mode, Uid: f.uid, Gid: f.gid,
			ModTime: mtime, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	b := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(mediaType))
}

// writeArchive writes img as an OCI image layout whose manifest.json makes
// it a docker save archive too.
func writeArchive(w io.Writer, img v1.Image, tag string, platform v1.Platform, mtime time.Time) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return err
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}

	// containerd's full name of the image: docker.io/library/..., not
	// go-containerregistry's index.docker.io.
	fullName := ref.Name()
	if ref.RegistryStr() == name.DefaultRegistry {
		fullName = "docker.io/" + ref.RepositoryStr() + ":" + ref.TagStr()
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mt, Size: int64(len(manifest)), Digest: digest, Platform: &platform,
			Annotations: map[string]string{
				"io.containerd.image.name":          fullName,
				"org.opencontainers.image.ref.name": ref.TagStr(),
			},
		}},
	})
	if err != nil {
		return err
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
	docker := []tarball.Descriptor{{Config: blob(configName), RepoTags: []string{tag}}}

	tw := tar.NewWriter(w)
	put := func(entry string, r io.Reader, size int64) error {
		h := &tar.Header{Name: entry, Mode: 0o644, Size: size, ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if strings.HasSuffix(entry, "/") {
			h.Mode, h.Typeflag = 0o755, tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil || r == nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	}
	putBytes := func(entry string, b []byte) error { return put(entry, bytes.NewReader(b), int64(len(b))) }

	if err := putBytes("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := putBytes("index.json", index); err != nil {
		return err
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := put(dir, nil, 0); err != nil {
			return err
		}
	}
	if err := putBytes(blob(digest), manifest); err != nil {
		return err
	}
	if err := putBytes(blob(configName), config); err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		err = put(blob(d), rc, size)
		_ = rc.Close()
		if err != nil {
			return err
		}
		docker[0].Layers = append(docker[0].Layers, blob(d))
	}
	// Last, as docker save writes it: readers look it up by name.
	dm, err := json.Marshal(docker)
	if err != nil {
		return err
	}
	if err := putBytes("manifest.json", dm); err != nil {
		return err
	}
	return tw.Close()
}
