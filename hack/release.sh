#!/usr/bin/env bash
# Releases VERSION x.y.z (semver, no "v"; docs/releasing.md). `make release
# VERSION=x.y.z` runs it, once before and once after the release commit:
#
#   1. The tree. It fails unless CHANGELOG.md has the release's section,
#      "## [x.y.z] - <date>", then writes VERSION, the chart's version and
#      appVersion (dist/chart/Chart.yaml) and the image IMAGE_REPO:x.y.z
#      wherever the tree names it: config/manager's kustomization (so
#      install.yaml), the chart's image.repository (its tag defaults to
#      appVersion) and the OLM bundle's CSV (make bundle). When that changed
#      anything it stops, for a person to review and commit the result and
#      tag the commit vx.y.z.
#   2. The artifacts. On a clean tree at the tag vx.y.z, step 1 changes
#      nothing and hack/release-artifacts.sh writes the image index, its
#      SBOM, the chart, install.yaml, the bundle and SHA256SUMS into
#      RELEASE_DIR, from the commit alone: the same commit gives the same
#      files (make test-release builds them twice and compares).
#
# `hack/release.sh --dev x.y.z-dev` (make bump-dev) does step 1 alone, with
# no changelog section, for the commit after a release: the tree then says
# x.y.z-dev, so no two different charts or bundles claim one release.
#
# Usage: hack/release.sh x.y.z | --dev x.y.z-dev | --check x.y.z (the
#        version's form and its CHANGELOG.md section only)
# Env:   IMAGE_REPO (the image's full name without tag), MAKE (default make),
#        KUSTOMIZE (default bin/kustomize), CHART_DIR (default dist/chart),
#        and for step 2 RELEASE_DIR and what hack/release-artifacts.sh reads.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

mode=release
case ${1-} in
--check | --dev)
  mode=${1#--}
  shift
  ;;
esac
version=${1-}
MAKE=${MAKE:-make}
KUSTOMIZE=${KUSTOMIZE:-$root/bin/kustomize}
CHART_DIR=${CHART_DIR:-dist/chart}

# semver.org's grammar: x.y.z with an optional pre-release; build metadata
# belongs to builds (internal/version), not to a release.
num='(0|[1-9][0-9]*)'
pre='(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)'
if ! [[ $version =~ ^$num\.$num\.$num(-$pre(\.$pre)*)?$ ]]; then
  echo "release: VERSION must be a semantic version x.y.z[-pre-release] without a \"v\", not \"$version\"" >&2
  exit 1
fi
if [[ $mode == dev && $version != *-dev ]]; then
  echo "release: make bump-dev takes the next version with -dev, such as 0.3.1-dev, not \"$version\"" >&2
  exit 1
fi
if [[ $mode != dev && $version == *-dev ]]; then
  echo "release: $version is a development version: make bump-dev writes it, make release does not" >&2
  exit 1
fi

# The section's heading, as Keep a Changelog writes it: "## [x.y.z] - 2026-11-30".
if [[ $mode != dev ]] && ! grep -Eq "^## \[${version//./\\.}\]( - [0-9]{4}-[0-9]{2}-[0-9]{2})?[[:space:]]*$" CHANGELOG.md; then
  echo "release: CHANGELOG.md has no section \"## [$version] - <date>\": write what changed first" >&2
  exit 1
fi
if [[ $mode == check ]]; then
  echo "CHANGELOG.md has a section for $version"
  exit 0
fi

# Step 1: the tree.
repo=${IMAGE_REPO:?IMAGE_REPO names the image: registry/path, no tag}
img=$repo:$version
printf '%s\n' "$version" > VERSION
chart=$CHART_DIR/Chart.yaml
sed -i -E -e "s/^version:.*/version: $version/" -e "s/^appVersion:.*/appVersion: \"$version\"/" "$chart"
# The first repository: under the top-level image: key (tests.image has one too).
sed -i -E "/^image:/,/^[^[:space:]#]/ s|^  repository:.*|  repository: $repo|" "$CHART_DIR/values.yaml"
grep -q "^version: $version\$" "$chart" && grep -q "^appVersion: \"$version\"\$" "$chart" &&
  grep -q "^  repository: $repo\$" "$CHART_DIR/values.yaml" || {
  echo "release: could not set version and appVersion in $chart, image.repository in $CHART_DIR/values.yaml" >&2
  exit 1
}
(cd config/manager && "$KUSTOMIZE" edit set image "controller=$img")
"$MAKE" --no-print-directory bundle VERSION="$version" BUNDLE_MANAGER_IMG="$img" >/dev/null

if [[ $mode == dev ]]; then
  echo "The tree says $version (image $img): commit VERSION, $CHART_DIR, config/manager, bundle/ and bundle.Dockerfile."
  exit 0
fi
if [[ -n $(git status --porcelain) ]]; then
  git status --short
  echo "Release $version prepared in the tree (image $img). Review and commit it, tag the commit v$version," \
    "then run make release VERSION=$version again to build the artifacts from it (docs/releasing.md)."
  exit 0
fi
if ! git tag --points-at HEAD | grep -qx "v$version"; then
  echo "release: the tree is ready for $version but HEAD is not tagged v$version: tag it first" \
    "(the binary's version and the artifacts' digests come from the tagged commit)" >&2
  exit 1
fi

# Step 2: the artifacts.
VERSION=$version IMAGE=$img KUSTOMIZE=$KUSTOMIZE CHART_DIR=$CHART_DIR ./hack/release-artifacts.sh
