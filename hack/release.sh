#!/usr/bin/env bash
# Prepares the release VERSION (x.y.z, semver, no "v") in the working tree,
# for a person to review and commit (README, "Versions and releases"):
#   1. fails unless CHANGELOG.md has its section, "## [x.y.z] - <date>";
#   2. writes VERSION;
#   3. dist/install.yaml for the image RELEASE_IMG (make build-installer);
#   4. the Helm chart's version and appVersion (dist/chart/Chart.yaml): the
#      chart's image tag defaults to appVersion (values.yaml, image.tag "");
#   5. the OLM bundle for VERSION and RELEASE_IMG (make bundle), when the
#      Makefile has it.
# It neither commits nor tags: after the commit, tag it vx.y.z and name it in
# hack/previous-release for the next release's upgrade test.
#
# Usage: hack/release.sh x.y.z       (make release VERSION=x.y.z)
#        hack/release.sh --check x.y.z   only step 1 and the version's form
# Env:   MAKE (default make), RELEASE_IMG (default sunstrider-operator:x.y.z),
#        CHART_DIR (default dist/chart).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

check_only=false
if [[ ${1-} == --check ]]; then
  check_only=true
  shift
fi
version=${1-}
MAKE=${MAKE:-make}
CHART_DIR=${CHART_DIR:-dist/chart}

# semver.org's grammar: x.y.z with an optional pre-release; build metadata
# belongs to builds (internal/version), not to a release.
num='(0|[1-9][0-9]*)'
pre='(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)'
if ! [[ $version =~ ^$num\.$num\.$num(-$pre(\.$pre)*)?$ ]]; then
  echo "release: VERSION must be a semantic version x.y.z[-pre-release] without a \"v\", not \"$version\"" >&2
  exit 1
fi

# The section's heading, as Keep a Changelog writes it: "## [x.y.z] - 2026-11-30".
if ! grep -Eq "^## \[${version//./\\.}\]( - [0-9]{4}-[0-9]{2}-[0-9]{2})?[[:space:]]*$" CHANGELOG.md; then
  echo "release: CHANGELOG.md has no section \"## [$version] - <date>\": write what changed first" >&2
  exit 1
fi
if $check_only; then
  echo "CHANGELOG.md has a section for $version"
  exit 0
fi

printf '%s\n' "$version" > VERSION

img=${RELEASE_IMG:-sunstrider-operator:$version}
"$MAKE" --no-print-directory build-installer IMG="$img" VERSION="$version"

chart=$CHART_DIR/Chart.yaml
sed -i -E \
  -e "s/^version:.*/version: $version/" \
  -e "s/^appVersion:.*/appVersion: \"$version\"/" \
  "$chart"
grep -q "^version: $version\$" "$chart" && grep -q "^appVersion: \"$version\"\$" "$chart" || {
  echo "release: could not set version and appVersion in $chart" >&2
  exit 1
}

if "$MAKE" --no-print-directory -n bundle VERSION="$version" >/dev/null 2>&1; then
  "$MAKE" --no-print-directory bundle VERSION="$version" BUNDLE_MANAGER_IMG="$img"
else
  echo "release: the Makefile has no bundle target: no OLM bundle written" >&2
fi

echo "Release $version prepared (image $img): VERSION, dist/install.yaml, $chart, the bundle."
echo "Review and commit them, tag the commit v$version, then name it in hack/previous-release."
