#!/usr/bin/env bash
# Builds the code-mode sandbox (go.starlark.net as a WebAssembly reactor) reproducibly.
#
#   starlark-wasm/build.sh          rebuild and write proxy/src/mcp/code-mode/starlark.wasm
#   starlark-wasm/build.sh --check  rebuild and fail if the bytes differ from the committed file
#
# The toolchain is pinned (GOTOOLCHAIN; fetched from the module proxy when the local Go differs),
# paths and VCS stamps are left out, so the same sources give the same bytes on any machine. A build
# is cached under ~/.cache/skybridge keyed by the inputs; without the cache it simply rebuilds (~1 min).
set -euo pipefail
GO_TOOLCHAIN=go1.26.8
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
committed="$here/../proxy/src/mcp/code-mode/starlark.wasm"
cd "$here"

command -v go >/dev/null || { echo "starlark-wasm/build.sh: Go is required" >&2; exit 1; }
hash="$( { cat build.sh go.mod go.sum main.go; echo "$GO_TOOLCHAIN"; } | sha256sum | cut -c1-16)"
root="${XDG_CACHE_HOME:-$HOME/.cache}/skybridge"
out="$root/starlark-wasm-$hash.wasm"
if [ ! -s "$out" ]; then
  mkdir -p "$root"
  tmp="$(mktemp "$root/.tmp-starlark-wasm.XXXXXX")"
  trap 'rm -f "$tmp"' EXIT
  GOTOOLCHAIN="$GO_TOOLCHAIN" GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
    go build -trimpath -buildmode=c-shared -ldflags="-s -w -buildid=" -o "$tmp" .
  mv "$tmp" "$out"
fi
if [ "${1:-}" = --check ]; then
  if ! cmp -s "$out" "$committed"; then
    echo "starlark-wasm/build.sh: $committed differs from a rebuild of starlark-wasm/ (run starlark-wasm/build.sh and commit the result)" >&2
    exit 1
  fi
else
  cp "$out" "$committed"
fi
