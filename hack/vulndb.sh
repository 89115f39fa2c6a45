#!/usr/bin/env bash
# Builds the Go vulnerability database govulncheck reads, from its source
# module golang.org/x/vulndb (data/osv) fetched through the Go module proxy:
# the same OSV entries vuln.go.dev serves, for machines that reach the proxy
# but not vuln.go.dev. Usage: vulndb.sh <indexdb binary> <outdir> <version>
# (<version> may be "latest"). Prints the database's directory.
set -euo pipefail
indexdb=$1 out=$2 version=$3
dir=$(go mod download -json "golang.org/x/vulndb@$version" | awk -F'"' '$2 == "Dir" {print $4}')
resolved=${dir##*@}
if [ -z "$dir" ] || [ ! -d "$dir/data/osv" ]; then
  echo "golang.org/x/vulndb@$version has no data/osv" >&2; exit 1
fi
db="$out/vulndb-$resolved"
if [ ! -f "$db/index/db.json" ]; then
  # A private temporary directory per run, and a half-written database
  # (an interrupted or concurrent earlier run) replaced whole.
  tmp=$(mktemp -d "$out/vulndb-build.XXXXXX")
  "$indexdb" -vulns "$dir/data/osv" -out "$tmp/db" >&2
  rm -rf "$db"
  mv -T "$tmp/db" "$db" || [ -f "$db/index/db.json" ]
  rm -rf "$tmp"
fi
echo "golang.org/x/vulndb@$resolved: $(ls "$dir/data/osv" | wc -l) entries" >&2
echo "$db"
