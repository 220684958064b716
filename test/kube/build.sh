#!/usr/bin/env bash
# Builds the test control plane into a cache directory outside the repo and prints that directory.
#
#   test/kube/build.sh                   kube-apiserver (with embedded etcd), kube-controller-manager, kubectl
#   test/kube/build.sh helm kubeconform  also (or only) these tools; "all" builds everything
#
# The directory is keyed by a hash of this script, go.mod, go.sum, the Go sources and the Go version,
# so an unchanged tree reuses the binaries (milliseconds) and any change builds a fresh set. helm and
# kubeconform are keyed by their pinned versions only and linked in. A cold build needs only Go and
# the module proxy. Progress goes to stderr; stdout is the directory.
set -euo pipefail

HELM_PKG=helm.sh/helm/v3/cmd/helm@v3.22.0
KUBECONFORM_PKG=github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kube-apiserver kube-controller-manager kubectl)
[ "${targets[*]}" != all ] || targets=(kube-apiserver kube-controller-manager kubectl helm kubeconform)
for t in "${targets[@]}"; do
  case "$t" in kube-apiserver | kube-controller-manager | kubectl | helm | kubeconform) ;; *) echo "build.sh: unknown target $t" >&2; exit 2 ;; esac
done

command -v go >/dev/null || { echo "build.sh: Go is required (go.mod says $(sed -n 's/^go //p' go.mod))" >&2; exit 1; }
goversion="$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)"
hash="$( { cat build.sh go.mod go.sum; find . -name '*.go' -type f | LC_ALL=C sort | xargs cat; echo "$goversion"; } | sha256sum | cut -c1-16)"
root="${SKYBRIDGE_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/skybridge}"
out="$root/kube-$hash"

missing() {
  local t
  for t in "${targets[@]}"; do [ -x "$out/$t" ] || return 0; done
  return 1
}
if ! missing; then echo "$out"; exit 0; fi

mkdir -p "$out"
tmp="$(mktemp -d "$root/.tmp-kube-$hash.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
export CGO_ENABLED=0
# readonly: a go.mod/go.sum out of step fails loudly instead of being rewritten in the checkout
# (-mod=mod is not needed: go.sum is committed and tidy). No VCS stamping: the tree may be dirty.
export GOFLAGS="-mod=readonly -buildvcs=false"
start=$SECONDS

# Test files run in parallel processes: one builds while the others wait on the same lock, then all
# reuse the result. Each output has its own lock so unrelated builds never queue behind each other.
want() { [[ " ${targets[*]} " == *" $1 "* ]] && [ ! -x "$out/$1" ]; }
if want kube-apiserver || want kube-controller-manager || want kubectl; then
  exec 9>"$out.lock"
  flock 9
  pkgs=()
  want kube-apiserver && pkgs+=(./apiserver)
  want kube-controller-manager && pkgs+=(./controllermanager)
  want kubectl && pkgs+=(./kubectl)
  if [ ${#pkgs[@]} -gt 0 ]; then
    echo "build.sh: building ${pkgs[*]} (a cold build takes several minutes; cached afterwards in $out)" >&2
    # Version stamps as Kubernetes' release build sets them (hack/lib/version.sh), from go.mod's pin,
    # so `kubectl version` and the server's /version report the real release.
    read -r kver ktime < <(go list -m -f '{{.Version}} {{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
    kmajor="${kver#v}" kminor="${kver#v*.}"
    ldflags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $pkg.gitVersion=$kver -X $pkg.gitMajor=${kmajor%%.*} -X $pkg.gitMinor=${kminor%%.*}"
      ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$ktime"
    done
    # One go build for all of them so their shared packages compile once, in parallel.
    go build -trimpath "-ldflags=$ldflags" -o "$tmp/" "${pkgs[@]}"
    [ ! -e "$tmp/apiserver" ] || mv "$tmp/apiserver" "$out/kube-apiserver"
    [ ! -e "$tmp/controllermanager" ] || mv "$tmp/controllermanager" "$out/kube-controller-manager"
    [ ! -e "$tmp/kubectl" ] || mv "$tmp/kubectl" "$out/kubectl"
    # Each source change leaves ~290 MB behind; keep the three newest builds.
    find "$root" -maxdepth 1 -name 'kube-*' -type d -printf '%T@ %p\n' | sort -rn | tail -n +4 | cut -d' ' -f2- |
      while read -r old; do rm -rf "$old" "$old.lock"; done
  fi
  exec 9>&-
fi

for t in helm kubeconform; do
  want "$t" || continue
  pkg=$HELM_PKG
  [ "$t" = helm ] || pkg=$KUBECONFORM_PKG
  tooldir="$root/tool-$t-${pkg##*@}-$goversion"
  mkdir -p "$tooldir"
  exec 9>"$tooldir.lock"
  flock 9
  if [ ! -x "$tooldir/$t" ]; then
    echo "build.sh: go install $pkg" >&2
    # Outside this module: go install pkg@version builds against the tool's own go.mod.
    (cd "$tmp" && GOFLAGS=-buildvcs=false GOBIN="$tmp" go install -trimpath "-ldflags=-s -w" "$pkg")
    mv "$tmp/$t" "$tooldir/$t"
  fi
  exec 9>&-
  ln -sfn "$tooldir/$t" "$out/$t"
done

[ $((SECONDS - start)) -lt 2 ] || echo "build.sh: ${targets[*]} ready in $((SECONDS - start))s" >&2
echo "$out"
