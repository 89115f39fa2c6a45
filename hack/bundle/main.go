// Command bundle writes the operator's OLM bundle (bundle/manifests,
// bundle/metadata and bundle.Dockerfile) from `kustomize build config/default`
// and `kustomize build config/samples`, completed by the hand-written parts of
// the ClusterServiceVersion in hack/bundle/csv.base.yaml. hack/bundle/bundle.sh
// runs it (`make bundle`); docs/olm.md explains the choices.
//
// The output depends on its inputs only (no timestamps), so that `make verify`
// can regenerate it into a temporary directory and diff.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

func main() {
	var in inputs
	var manifestsFile, samplesFile, baseFile, iconFile, outDir string
	flag.StringVar(&manifestsFile, "manifests", "", "Output of `kustomize build config/default`.")
	flag.StringVar(&samplesFile, "samples", "", "Output of `kustomize build config/samples` (the CSV's alm-examples).")
	flag.StringVar(&baseFile, "base", "hack/bundle/csv.base.yaml", "Hand-written parts of the ClusterServiceVersion.")
	flag.StringVar(&iconFile, "icon", "hack/bundle/icon.svg", "The operator's icon (SVG).")
	flag.StringVar(&outDir, "out", ".", "Directory receiving bundle/ and bundle.Dockerfile.")
	flag.StringVar(&in.Version, "version", "", "The bundle's version, x.y.z.")
	flag.StringVar(&in.Replaces, "replaces", "", "The version this one replaces, x.y.z (empty: none).")
	flag.StringVar(&in.Image, "image", "", "The operator image the bundle's Deployment runs.")
	flag.StringVar(&in.Package, "package", "sunstrider-operator", "The OLM package name.")
	flag.StringVar(&in.Channels, "channels", "", "Comma-separated channels the bundle is in.")
	flag.StringVar(&in.DefaultChannel, "default-channel", "", "The package's default channel.")
	flag.Parse()

	if err := run(&in, manifestsFile, samplesFile, baseFile, iconFile, outDir); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(in *inputs, manifestsFile, samplesFile, baseFile, iconFile, outDir string) error {
	for name, value := range map[string]string{
		"-manifests": manifestsFile, "-samples": samplesFile, "-version": in.Version, "-image": in.Image,
		"-channels": in.Channels, "-default-channel": in.DefaultChannel,
	} {
		if value == "" {
			return fmt.Errorf("%s is required", name)
		}
	}
	var err error
	if in.Manifests, err = os.ReadFile(manifestsFile); err != nil {
		return err
	}
	if in.Samples, err = os.ReadFile(samplesFile); err != nil {
		return err
	}
	if in.Base, err = os.ReadFile(baseFile); err != nil {
		return err
	}
	if in.Icon, err = os.ReadFile(iconFile); err != nil {
		return err
	}
	files, err := generate(in)
	if err != nil {
		return err
	}
	// Files of a previous run that this one would not write must go: the
	// generated directories are replaced as a whole.
	for _, dir := range []string{"bundle/manifests", "bundle/metadata"} {
		if err := os.RemoveAll(filepath.Join(outDir, dir)); err != nil {
			return err
		}
	}
	paths := slices.Sorted(maps.Keys(files))
	for _, path := range paths {
		full := filepath.Join(outDir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[path], 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("Wrote %d files: bundle/ and bundle.Dockerfile (%s %s)\n", len(paths), in.Package, in.Version)
	return nil
}
