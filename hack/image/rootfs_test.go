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
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// tarEntry is what the Dockerfile's ADD takes of a tar entry: its path,
// type, mode, owner, mtime and content.
type tarEntry struct {
	name       string
	typeflag   byte
	mode       int64
	uid, gid   int
	mtime      time.Time
	sha256, ln string
}

func (e tarEntry) String() string {
	return fmt.Sprintf("%s type %c mode %o %d:%d mtime %s sha256 %.12s link %q",
		e.name, e.typeflag, e.mode, e.uid, e.gid, e.mtime.UTC().Format(time.RFC3339), e.sha256, e.ln)
}

// tarEntries reads a plain tar's entries in order.
func tarEntries(t *testing.T, r io.Reader) []tarEntry {
	t.Helper()
	var all []tarEntry
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return all
		}
		if err != nil {
			t.Fatalf("not a plain tar: %v", err)
		}
		sum := sha256.New()
		if _, err := io.Copy(sum, tr); err != nil {
			t.Fatal(err)
		}
		all = append(all, tarEntry{name: h.Name, typeflag: h.Typeflag, mode: h.Mode, uid: h.Uid, gid: h.Gid,
			mtime: h.ModTime.UTC(), sha256: fmt.Sprintf("%x", sum.Sum(nil)), ln: h.Linkname})
	}
}

// layerEntries are the entries of img's layers, layer after layer.
func layerEntries(t *testing.T, img v1.Image) []tarEntry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	all := make([]tarEntry, 0, 8)
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, tarEntries(t, rc)...)
		_ = rc.Close()
	}
	return all
}

// TestRootfs: -rootfs-out writes a plain tar with exactly the entries of
// the image's layers (the archive -out writes in the same run), in their
// order, with their modes, owners, mtimes and contents; alone, it writes
// the same bytes and no archive.
func TestRootfs(t *testing.T) {
	bin := staticBinary(t)
	binData, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	certs, pem := caBundle(t)
	const created = "1764547200"
	mtime := time.Unix(1764547200, 0).UTC()
	base := []string{"etc/", "etc/group", "etc/passwd"}
	home := []string{"home/", "home/nonroot/", "tmp/"}
	for _, tc := range []struct {
		name       string
		entrypoint string
		caCerts    string
		// want: the rootfs's names in order; the binary's and the CA
		// bundle's entries are checked further.
		want []string
	}{
		{name: "manager", want: slices.Concat(base, home, []string{"manager"})},
		{name: "CA bundle", caCerts: certs,
			want: slices.Concat(base, []string{"etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt"},
				home, []string{"manager"})},
		{name: "entrypoint /app", entrypoint: "/app", want: slices.Concat(base, home, []string{"app"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Binary: bin, Entrypoint: tc.entrypoint, CACerts: tc.caCerts, Tag: "sunstrider-operator:test"}
			out, rootfs := filepath.Join(dir, "image.tar"), filepath.Join(dir, "rootfs.tar")
			if err := run(o, out, rootfs, created); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(rootfs)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
				t.Fatal("the rootfs is gzip-compressed; want a plain tar")
			}
			got := tarEntries(t, bytes.NewReader(data))
			img, err := tarball.ImageFromPath(out, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := layerEntries(t, img)
			if !slices.Equal(got, want) {
				t.Errorf("rootfs entries:\n%s\nwant the image's layers':\n%s", lines(got), lines(want))
			}

			binName := strings.TrimPrefix(tc.entrypoint, "/")
			if binName == "" {
				binName = "manager"
			}
			var certsData []byte
			if tc.caCerts != "" {
				certsData = pem
			}
			checkRootfsEntries(t, got, tc.want, mtime, map[string][]byte{binName: binData,
				"etc/ssl/certs/ca-certificates.crt": certsData})

			// -rootfs-out alone: the same bytes, and no archive.
			alone := filepath.Join(dir, "alone", "rootfs.tar")
			if err := run(o, "", alone, created); err != nil {
				t.Fatal(err)
			}
			if again, err := os.ReadFile(alone); err != nil || !bytes.Equal(again, data) {
				t.Errorf("-rootfs-out alone: %d bytes, %v; want the %d bytes written beside -out", len(again), err, len(data))
			}
			if entries, err := os.ReadDir(filepath.Dir(alone)); err != nil || len(entries) != 1 {
				t.Errorf("-rootfs-out alone wrote %v (%v); want the rootfs only", entries, err)
			}
		})
	}

	if err := run(Options{Binary: bin}, "", "", created); err == nil || !strings.Contains(err.Error(), "-rootfs-out") {
		t.Errorf("neither -out nor -rootfs-out: %v, want refused", err)
	}
}

// checkRootfsEntries: the names in order, every mtime -created, the
// binary's and CA bundle's entries (contents: path to data, nil for none)
// and the nonroot home and /tmp.
func checkRootfsEntries(t *testing.T, got []tarEntry, want []string, mtime time.Time, contents map[string][]byte) {
	t.Helper()
	names := make([]string, 0, len(got))
	byName := map[string]tarEntry{}
	for _, e := range got {
		names = append(names, e.name)
		byName[e.name] = e
		if !e.mtime.Equal(mtime) {
			t.Errorf("%s: mtime %v, want -created %v", e.name, e.mtime, mtime)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("rootfs names %q, want %q", names, want)
	}
	for name, data := range contents {
		if data == nil {
			continue
		}
		mode := int64(0o644)
		if name != "etc/ssl/certs/ca-certificates.crt" {
			mode = 0o755 // the binary
		}
		if e := byName[name]; e.typeflag != tar.TypeReg || e.mode != mode || e.uid != 0 || e.gid != 0 ||
			e.sha256 != fmt.Sprintf("%x", sha256.Sum256(data)) {
			t.Errorf("%s: %v; want the file given, mode %o, owned by root", name, e, mode)
		}
	}
	if e := byName["home/nonroot/"]; e.typeflag != tar.TypeDir || e.mode != 0o700 ||
		e.uid != NonRoot || e.gid != NonRoot {
		t.Errorf("home/nonroot/: %v; want a directory of 65532:65532, mode 700", e)
	}
	if e := byName["tmp/"]; e.typeflag != tar.TypeDir || e.mode != 0o1777 {
		t.Errorf("tmp/: %v; want a directory with mode 1777", e)
	}
}

func lines(es []tarEntry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "  %v\n", e)
	}
	return b.String()
}
