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
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// staticBinary builds a tiny static Go program, as make image builds the manager.
func staticBinary(t *testing.T) string {
	t.Helper()
	return staticBinaryFor(t, runtime.GOARCH)
}

// staticBinaryFor builds it for the Linux architecture goarch.
func staticBinaryFor(t *testing.T, goarch string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build a test binary: %v", err)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module tiny\n\ngo 1.26\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "manager")
	cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch, "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeImage(t *testing.T, o Options) (string, Result) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Write(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// entry is a file of the image's layers.
type entry struct {
	hdr  *tar.Header
	data []byte
}

func files(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]entry{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			name := path.Clean("/" + h.Name)
			if _, dup := all[name]; dup {
				t.Errorf("%s is in more than one layer", name)
			}
			all[name] = entry{hdr: h, data: data}
		}
		_ = rc.Close()
	}
	return all
}

// caBundle writes a PEM file for -ca-certs and returns its path and
// content.
func caBundle(t *testing.T) (string, []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ca.crt")
	pem := []byte("-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n")
	if err := os.WriteFile(file, pem, 0o644); err != nil {
		t.Fatal(err)
	}
	return file, pem
}

func TestImage(t *testing.T) {
	bin := staticBinary(t)
	binData, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	certs, pem := caBundle(t)
	o := Options{
		Binary: bin, CACerts: certs, Tag: "example.com/sunstrider-operator:0.2.0_abc1234",
		Created: time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC),
		Title:   "sunstrider-operator", Description: "an operator", Source: "https://example.com/src",
		Licenses: "Apache-2.0", Version: "0.2.0+abc1234", Revision: "abc1234def",
	}
	out, res := writeImage(t, o)
	img := checkArchive(t, out, res, o.Tag)
	checkConfig(t, img, o.Created)
	fs := checkFiles(t, img, o.Created)
	checkContents(t, fs, binData, pem)

	// Reproducible: the same inputs give the same bytes.
	again, res2 := writeImage(t, o)
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) || res2.Digest != res.Digest {
		t.Errorf("a second build differs: %v vs %v", res2.Digest, res.Digest)
	}

	// No CA bundle, no /etc/ssl.
	o.CACerts = ""
	img, _, err = Build(o)
	if err != nil {
		t.Fatal(err)
	}
	for name := range files(t, img) {
		if strings.HasPrefix(name, "/etc/ssl") {
			t.Errorf("%s without -ca-certs", name)
		}
	}
}

// checkArchive reads the archive as crane push does: a tar file as a docker
// save archive, a directory (the archive, unpacked) as an OCI image layout.
// Both are the image Write reported.
func checkArchive(t *testing.T, out string, res Result, tag string) v1.Image {
	t.Helper()
	img, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("invalid image: %v", err)
	}
	if d, err := img.Digest(); err != nil || d != res.Digest {
		t.Errorf("digest as docker archive (what crane push pushes) = %v, %v; want %v", d, err, res.Digest)
	}

	idx, err := layout.ImageIndexFromPath(untar(t, out))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != res.Digest ||
		im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != tag[strings.LastIndex(tag, ":")+1:] ||
		im.Manifests[0].Annotations["io.containerd.image.name"] != tag {
		t.Errorf("index.json = %+v; want the one image %v tagged %s", im.Manifests, res.Digest, tag)
	}
	limg, err := idx.Image(res.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(limg); err != nil {
		t.Fatalf("invalid image in the OCI layout: %v", err)
	}
	return img
}

func checkConfig(t *testing.T, img v1.Image, created time.Time) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("user = %q, want the non-root 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/manager"}) || len(c.Cmd) != 0 || c.WorkingDir != "/" {
		t.Errorf("entrypoint %q, cmd %q, working dir %q; want [/manager], none, /", c.Entrypoint, c.Cmd, c.WorkingDir)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || !cf.Created.Equal(created) {
		t.Errorf("platform %s/%s created %v; want linux/%s %v", cf.OS, cf.Architecture, cf.Created, runtime.GOARCH, created)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.title":       "sunstrider-operator",
		"org.opencontainers.image.description": "an operator",
		"org.opencontainers.image.source":      "https://example.com/src",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     "0.2.0+abc1234",
		"org.opencontainers.image.revision":    "abc1234def",
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
	}
	for k, v := range wantLabels {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if len(c.Labels) != len(wantLabels) {
		t.Errorf("labels %v, want exactly %v", c.Labels, wantLabels)
	}
}

// checkFiles: exactly the expected files, no shell, every mtime created.
func checkFiles(t *testing.T, img v1.Image, created time.Time) map[string]entry {
	t.Helper()
	fs := files(t, img)
	names := make([]string, 0, len(fs))
	for name, e := range fs {
		names = append(names, name)
		if !e.hdr.ModTime.Equal(created) {
			t.Errorf("%s: mtime %v, want %v", name, e.hdr.ModTime, created)
		}
		if base := path.Base(name); slices.Contains([]string{"sh", "bash", "ash", "dash", "zsh", "busybox"}, base) ||
			strings.HasPrefix(name, "/bin") || strings.HasPrefix(name, "/usr") || strings.HasPrefix(name, "/sbin") {
			t.Errorf("%s: the image must have no shell and no tools", name)
		}
	}
	slices.Sort(names)
	want := []string{"/etc", "/etc/group", "/etc/passwd", "/etc/ssl", "/etc/ssl/certs",
		"/etc/ssl/certs/ca-certificates.crt", "/home", "/home/nonroot", "/manager", "/tmp"}
	if !slices.Equal(names, want) {
		t.Errorf("files %q, want exactly %q", names, want)
	}
	return fs
}

// checkContents: the binary, users, certificates and directories.
func checkContents(t *testing.T, fs map[string]entry, bin, pem []byte) {
	t.Helper()
	m := fs["/manager"]
	if m.hdr == nil || m.hdr.Typeflag != tar.TypeReg || m.hdr.Mode&0o111 != 0o111 || m.hdr.Uid != 0 ||
		!bytes.Equal(m.data, bin) {
		t.Errorf("/manager: %+v; want the binary, a regular executable file owned by root", m.hdr)
	}
	for name, want := range map[string]string{
		"/etc/passwd": "\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
		"/etc/group":  "\nnonroot:x:65532:\n",
	} {
		if !strings.Contains(string(fs[name].data), want) {
			t.Errorf("%s:\n%s\nwant a line %q", name, fs[name].data, strings.TrimSpace(want))
		}
	}
	if !bytes.Equal(fs["/etc/ssl/certs/ca-certificates.crt"].data, pem) {
		t.Error("the CA certificates are not the bundle given")
	}
	if h := fs["/tmp"].hdr; h == nil || h.Typeflag != tar.TypeDir || h.Mode != 0o1777 {
		t.Errorf("/tmp: %+v; want a directory with mode 1777", h)
	}
	if h := fs["/home/nonroot"].hdr; h == nil || h.Uid != NonRoot || h.Gid != NonRoot || h.Mode != 0o700 {
		t.Errorf("/home/nonroot: %+v; want a directory of 65532:65532, mode 700", h)
	}
}

func TestRejectsWhatScratchCannotRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "manager")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := Build(Options{Binary: script, Tag: "x:y"})
	if err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("a shell script: %v, want refused", err)
	}
	// A dynamically linked executable: refused for its interpreter.
	for _, candidate := range []string{"/bin/true", "/usr/bin/true"} {
		if b, err := os.ReadFile(candidate); err == nil {
			if _, err := StaticPlatform(b); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
				t.Errorf("%s: %v, want refused as dynamically linked", candidate, err)
			}
			break
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"0":                    time.Unix(0, 0).UTC(),
		"1700000000":           time.Unix(1700000000, 0).UTC(),
		"2026-05-04T03:02:01Z": time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC),
	} {
		if got, err := ParseTime(in); err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseTime("yesterday"); err == nil {
		t.Error("ParseTime(yesterday): no error")
	}
}

// untar unpacks the archive into a directory.
func untar(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+h.Name)))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEntrypoint(t *testing.T) {
	bin := staticBinary(t)
	o := Options{Binary: bin, Entrypoint: "/app", Tag: "sunstrider.local/testapp:v1",
		Created: time.Unix(1764547200, 0).UTC()}
	out, res := writeImage(t, o)
	img := checkArchive(t, out, res, o.Tag)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/app"}) || cf.Config.User != "65532:65532" {
		t.Errorf("entrypoint %q user %q; want [/app] 65532:65532", cf.Config.Entrypoint, cf.Config.User)
	}
	fs := files(t, img)
	if e, ok := fs["/app"]; !ok || e.hdr.Mode != 0o755 || e.hdr.Typeflag != tar.TypeReg {
		t.Errorf("/app: %+v; want the binary, mode 755", e.hdr)
	}
	if _, ok := fs["/manager"]; ok {
		t.Error("/manager with -entrypoint /app")
	}
	if h := cf.History; len(h) != 2 || h[1].CreatedBy != "hack/image: /app" {
		t.Errorf("history %+v; want the binary's layer created by hack/image: /app", h)
	}

	for _, bad := range []string{"app", "/usr/bin/app", "/app/", "/", "/..", "/etc", "/tmp", "/home"} {
		o.Entrypoint = bad
		if _, _, err := Build(o); err == nil || !strings.Contains(err.Error(), "-entrypoint") {
			t.Errorf("-entrypoint %q: %v, want refused", bad, err)
		}
	}
}
