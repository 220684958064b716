#!/usr/bin/env bash
# Builds the test OpenTelemetry Collector (manifest.yaml) into a cache directory outside the repo and
# prints the binary's path. Keyed by a hash of this script, the manifest and the Go version, so an
# unchanged manifest reuses the binary (milliseconds); a cold build takes a few minutes and needs
# only Go and the module proxy. Progress goes to stderr; stdout is the binary's path.
set -euo pipefail

BUILDER_PKG=go.opentelemetry.io/collector/cmd/builder@v0.165.0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
command -v go >/dev/null || { echo "otel/build.sh: Go is required" >&2; exit 1; }
goversion="$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)"
hash="$( { cat build.sh manifest.yaml; echo "$goversion"; } | sha256sum | cut -c1-16)"
root="${SKYBRIDGE_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/skybridge}"
out="$root/otelcol-$hash"
bin="$out/otelcol-skybridge"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

mkdir -p "$out"
# Test files run in parallel processes: one builds while the others wait, then all reuse it.
exec 9>"$out.lock"
flock 9
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
tmp="$(mktemp -d "$root/.tmp-otelcol-$hash.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
echo "otel/build.sh: building the OpenTelemetry Collector (a cold build takes several minutes; cached afterwards in $out)" >&2
(cd "$tmp" && GOBIN="$tmp" go install -trimpath "-ldflags=-s -w" "$BUILDER_PKG")
sed "s#output_path: ./out#output_path: $tmp/src#" manifest.yaml > "$tmp/manifest.yaml"
# The builder's own `go mod tidy` fails on a 403 for a module only the file exporter's tests use:
# the sources and go.mod are written before that, so its failure is let through when they are
# there, then tidy runs tolerating that module and the collector is built.
"$tmp/builder" --config "$tmp/manifest.yaml" --skip-compilation >&2 || [ -f "$tmp/src/go.mod" ] || { echo "otel/build.sh: the builder wrote no go.mod" >&2; exit 1; }
(cd "$tmp/src" && go mod tidy -e >&2 && go build -trimpath "-ldflags=-s -w" -o "$tmp/otelcol-skybridge" .)
mv "$tmp/otelcol-skybridge" "$bin"
exec 9>&-
# Keep the two newest builds.
find "$root" -maxdepth 1 -name 'otelcol-*' -type d -printf '%T@ %p\n' | sort -rn | tail -n +3 | cut -d' ' -f2- |
  while read -r old; do rm -rf "$old" "$old.lock"; done
echo "otel/build.sh: collector ready in $((SECONDS - start))s" >&2
echo "$bin"
