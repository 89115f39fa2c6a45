#!/usr/bin/env bash
# Writes the release's artifacts into RELEASE_DIR (hack/release.sh, step 2;
# docs/releasing.md), from the committed tree alone:
#
#   sunstrider-operator-V.oci.tar   OCI image layout: the index over
#                                   linux/amd64 and linux/arm64, tagged V, and
#                                   its SBOM as an OCI 1.1 artifact whose
#                                   subject is the index (hack/image -index)
#   sunstrider-operator-V.cdx.json  the same SBOM (CycloneDX JSON)
#   sunstrider-operator-V.tgz       the Helm chart (helm package)
#   install.yaml                    kustomize build config/default
#   sunstrider-operator-bundle-V.tar.gz  bundle/ and bundle.Dockerfile
#   SHA256SUMS                      sha256sum of all of the above
#
# Reproducible: the binaries are built with -trimpath and the LDFLAGS of the
# commit, every timestamp is SOURCE_DATE_EPOCH (the commit's time), and every
# tar lists its entries sorted, owned by 0:0, with modes 0644/0755 (GNU tar
# and gzip -n, which records no name or time). `helm package` stamps the
# time of packaging on each entry, so its archive is unpacked and packed
# again that way.
#
# Env: VERSION, IMAGE (repository:VERSION), RELEASE_DIR (must not exist or
# be empty), SOURCE_DATE_EPOCH, LDFLAGS, REVISION, IMAGE_SOURCE,
# IMAGE_CA_CERTS (a CA bundle for the image, empty for none), KUSTOMIZE,
# HELM, CHART_DIR (default dist/chart).
set -euo pipefail
export LC_ALL=C # sort and glob in one order everywhere
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
: "${VERSION:?}" "${IMAGE:?}" "${RELEASE_DIR:?}" "${SOURCE_DATE_EPOCH:?}" "${LDFLAGS:?}" "${KUSTOMIZE:?}" "${HELM:?}"
CHART_DIR=${CHART_DIR:-dist/chart}
platforms=(amd64 arm64)
name=sunstrider-operator

if [[ -e $RELEASE_DIR && -n $(ls -A "$RELEASE_DIR") ]]; then
  echo "release: $RELEASE_DIR is not empty: remove it to build the release again" >&2
  exit 1
fi
mkdir -p "$RELEASE_DIR"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# reproducible_tar DIR NAME...: a tar of NAME... (and what is under them)
# in DIR on stdout, as said above.
reproducible_tar() {
  local dir=$1
  shift
  (cd "$dir" && find "$@" -print0 | sort -z |
    tar --create --file=- --format=gnu --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
      --mtime="@$SOURCE_DATE_EPOCH" --no-recursion --null --files-from=-)
}

# The image index and its SBOM.
binaries=()
for arch in "${platforms[@]}"; do
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags "-s -w $LDFLAGS" -o "$work/manager-linux-$arch" ./cmd
  binaries+=("$work/manager-linux-$arch")
done
# hack/image is a Go module of its own (its go.mod says why): built there,
# run from here.
go -C hack/image build -o "$work/image" .
(IFS=,; "$work/image" -index "$work/oci" -sbom-out "$RELEASE_DIR/$name-$VERSION.cdx.json" \
  -binary "${binaries[*]}" -tag "$IMAGE" -created "$SOURCE_DATE_EPOCH" -version "$VERSION" \
  -revision "${REVISION-}" -source "${IMAGE_SOURCE-}" -ca-certs "${IMAGE_CA_CERTS-}" \
  -description "Kubernetes operator for Application, MyCustomResource, Guestbook and Drink")
reproducible_tar "$work/oci" oci-layout index.json blobs > "$RELEASE_DIR/$name-$VERSION.oci.tar"

# The chart, packed again without the time of packaging.
"$HELM" package "$CHART_DIR" --version "$VERSION" --app-version "$VERSION" -d "$work/helm" >/dev/null
mkdir "$work/chart"
tar -xzf "$work/helm/$name-$VERSION.tgz" -C "$work/chart"
reproducible_tar "$work/chart" "$name" | gzip -9n > "$RELEASE_DIR/$name-$VERSION.tgz"

"$KUSTOMIZE" build config/default > "$RELEASE_DIR/install.yaml"
reproducible_tar . bundle bundle.Dockerfile | gzip -9n > "$RELEASE_DIR/$name-bundle-$VERSION.tar.gz"

(cd "$RELEASE_DIR" && files=(*) && sha256sum -- "${files[@]}" > SHA256SUMS)
echo "Release $VERSION in $RELEASE_DIR (image $IMAGE):"
cat "$RELEASE_DIR/SHA256SUMS"
