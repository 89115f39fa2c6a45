//go:build container

package container

import (
	"archive/tar"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"sunstrider.cn/operator/internal/testutil"
)

// TestDockerfileBuildsTheImageOfMakeImage builds the repository's
// Dockerfile with podman the way a user does, `make docker-build
// CONTAINER_TOOL=podman` (the target prepares the build context: the
// manager and its rootfs tar under bin/docker), and compares the image with
// the archive of `make image` (IMAGE_ARCHIVE, which make test-container
// builds just before from the same tree): the same files, each with the
// same type, mode, owner, mtime and content digest, and the same user,
// entrypoint, platform and version and revision labels. It needs neither
// the suite's cluster nor a container runtime: the Dockerfile has no RUN.
func TestDockerfileBuildsTheImageOfMakeImage(t *testing.T) {
	began := time.Now()
	repo, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want := os.Getenv("IMAGE_ARCHIVE")
	if want == "" {
		t.Fatal("IMAGE_ARCHIVE is not set: run the suite with `make test-container`")
	}
	podmanBin, err := exec.LookPath(envOr("PODMAN", "podman"))
	if err != nil {
		t.Fatalf("podman: %v: install podman (Debian/Ubuntu: apt-get install -y podman runc)", err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		// No intermediate images: podman build keeps one per instruction
		// by default, and removing the tag leaves the first (FROM scratch,
		// ARG) behind.
		cmd.Env = append(os.Environ(), "BUILDAH_LAYERS=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, indent(string(out)))
		}
	}

	// A tag of this run's own, so a suite beside it or a user's image of
	// the same name is left alone.
	tag := fmt.Sprintf("localhost/sunstrider-operator-dockerfile-test:%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = exec.Command(podmanBin, "rmi", "--force", tag).Run() })
	// make passes the variables given to `make test-container` on its
	// command line (MAKEFLAGS) on to this make, so both builds get the same
	// VERSION, REVISION and IMAGE_CA_CERTS.
	run("make", "--no-print-directory", "docker-build", "CONTAINER_TOOL="+podmanBin, "IMG="+tag)
	t.Logf("make docker-build: %s", time.Since(began).Round(time.Second))
	saved := filepath.Join(t.TempDir(), "docker-build.tar")
	run(podmanBin, "save", "--format", "docker-archive", "--output", saved, tag)

	built, wanted := readImage(t, saved), readImage(t, want)
	if _, ok := wanted.files["/manager"]; !ok {
		t.Fatalf("%s has no /manager: not the operator's image", want)
	}
	var diffs []string
	names := map[string]bool{}
	for _, fs := range []map[string]fileInfo{wanted.files, built.files} {
		for name := range fs {
			names[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		w, inWant := wanted.files[name]
		b, inBuilt := built.files[name]
		switch {
		case !inBuilt:
			diffs = append(diffs, fmt.Sprintf("%s: missing (make image: %v)", name, w))
		case !inWant:
			diffs = append(diffs, fmt.Sprintf("%s: not in make image's (docker-build: %v)", name, b))
		case w != b:
			diffs = append(diffs, fmt.Sprintf("%s: %v, make image's %v", name, b, w))
		}
	}
	for _, d := range diffs {
		t.Errorf("docker-build's image differs from make image's: %s", d)
	}
	bc, wc := built.config, wanted.config
	if bc.Config.User != wc.Config.User || !slices.Equal(bc.Config.Entrypoint, wc.Config.Entrypoint) {
		t.Errorf("docker-build's image runs %q as %q; make image's runs %q as %q",
			bc.Config.Entrypoint, bc.Config.User, wc.Config.Entrypoint, wc.Config.User)
	}
	if bc.OS != wc.OS || bc.Architecture != wc.Architecture || bc.Variant != wc.Variant {
		t.Errorf("docker-build's image is for %s/%s%s; make image's for %s/%s%s",
			bc.OS, bc.Architecture, bc.Variant, wc.OS, wc.Architecture, wc.Variant)
	}
	for _, label := range []string{"org.opencontainers.image.version", "org.opencontainers.image.revision"} {
		if b, w := bc.Config.Labels[label], wc.Config.Labels[label]; b != w || w == "" {
			t.Errorf("label %s: docker-build's %q, make image's %q", label, b, w)
		}
	}
	t.Logf("FIGURES: the Dockerfile's image (%d files, user %s, entrypoint %q) compared with make image's in %s",
		len(built.files), bc.Config.User, bc.Config.Entrypoint, time.Since(began).Round(time.Second))
}

// fileInfo is what the image holds of a path.
type fileInfo struct {
	typeflag byte
	// mode as Go reads it: permissions, sticky, setuid and setgid bits
	// and the type, whether the tar has the type bits in its mode field
	// (buildah's layers: 040755) or not (hack/image's: 755).
	mode     os.FileMode
	uid, gid int
	mtime    time.Time
	size     int64
	sha256   string
	link     string
}

func (f fileInfo) String() string {
	return fmt.Sprintf("type %c mode %v %d:%d mtime %s size %d sha256 %.12s link %q", f.typeflag, f.mode,
		f.uid, f.gid, f.mtime.Format(time.RFC3339), f.size, f.sha256, f.link)
}

type imageFiles struct {
	config *v1.ConfigFile
	// files by absolute path: the image's filesystem, its layers applied.
	files map[string]fileInfo
}

// readImage reads a docker save archive (make image's archive is one too).
func readImage(t *testing.T, archive string) imageFiles {
	t.Helper()
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	fs := mutate.Extract(img)
	defer func() { _ = fs.Close() }()
	files := map[string]fileInfo{}
	tr := tar.NewReader(fs)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		sum := sha256.New()
		if _, err := io.Copy(sum, tr); err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		files[path.Clean("/"+h.Name)] = fileInfo{typeflag: h.Typeflag, mode: h.FileInfo().Mode(), uid: h.Uid, gid: h.Gid,
			mtime: h.ModTime.UTC(), size: h.Size, sha256: fmt.Sprintf("%x", sum.Sum(nil)), link: h.Linkname}
	}
	return imageFiles{config: cf, files: files}
}
