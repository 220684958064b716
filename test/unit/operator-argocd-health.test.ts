// The Argo CD health check (deploy/argocd/health.lua, shipped for every kind in health.yaml) run in
// a real Lua interpreter against CR states the operator's own status code produces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { desiredConditions, nextStatus } from '../../operator/src/status.ts';
import { KINDS } from '../../operator/src/resources/kinds.ts';
import type { RenderOutcome } from '../../operator/src/status.ts';
import type { Verdict } from '../../operator/src/resources/desired.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const SCRIPT = readFileSync(`${ROOT}deploy/argocd/health.lua`, 'utf8');
const LUA = ['lua5.4', 'lua5.3', 'lua'].find((bin) => {
  try {
    execFileSync(bin, ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

/** A JSON value as a Lua table constructor (Argo CD hands the object to the script as a table). */
function lua(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map(lua).join(', ')}}`;
  return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `[${JSON.stringify(k)}] = ${lua(x)}`).join(', ')}}`;
}

function health(obj: unknown): { status: string; message: string } {
  assert.ok(LUA, 'a Lua interpreter (lua5.4 or lua5.3; test/run.sh installs lua5.4)');
  const program = `obj = ${lua(obj)}\nlocal hs = (function()\n${SCRIPT}\nend)()\nio.write(hs.status, "\\n", hs.message or "")`;
  const out = execFileSync(LUA, ['-'], { input: program, encoding: 'utf8' });
  const [status, ...rest] = out.split('\n');
  return { status, message: rest.join('\n') };
}

const now = new Date('2026-01-01T00:00:00Z');
const VALID: Verdict = { accepted: true, reason: 'Valid', message: 'The spec is valid and included in the rendered configuration.' };
const RENDERED: RenderOutcome = { ok: true, revision: 'abc' };

/** A CR as the operator leaves it: spec at `generation`, status written for `observed`. */
function recorded(generation: number, observed: number | undefined, verdict = VALID, outcome = RENDERED) {
  return {
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'VirtualKey',
    metadata: { name: 'checkout', namespace: 'skybridge', generation },
    spec: {},
    ...(observed === undefined ? {} : { status: nextStatus(undefined, desiredConditions(verdict, outcome), observed, now) }),
  };
}

test('Healthy: accepted and rendered for the current generation', () => {
  assert.deepEqual(health(recorded(3, 3)), { status: 'Healthy', message: 'Included in the configuration the proxies load.' });
});

test('Progressing: no status yet, or a status for an older generation (never a stale Healthy)', () => {
  assert.equal(health(recorded(1, undefined)).status, 'Progressing');
  const old = health(recorded(4, 3));
  assert.equal(old.status, 'Progressing');
  assert.match(old.message, /observe generation 4/);
});

test('Degraded: refused, degraded (parts left out), or the render held or failed', () => {
  const refused = health(recorded(2, 2, { accepted: false, reason: 'ReferenceNotFound', message: "spec.targets[0].provider: provider 'groq' is not defined by any Provider" }));
  assert.equal(refused.status, 'Degraded');
  assert.match(refused.message, /^ReferenceNotFound: spec\.targets\[0\]\.provider/);
  const partial = health(recorded(1, 1, { accepted: true, reason: 'Degraded', message: "Rendered without the parts whose references are broken: spec.provider_configs[1].provider: provider 'anthropic' is not configured" }));
  assert.equal(partial.status, 'Degraded');
  assert.match(partial.message, /^Degraded: /);
  const held = health(recorded(5, 5, VALID, { ok: false, held: true, message: 'The proxies keep serving the last good configuration' }));
  assert.deepEqual(held, { status: 'Degraded', message: 'RenderHeld: The proxies keep serving the last good configuration' });
  assert.equal(health(recorded(1, 1, VALID, { ok: false, message: 'Writing the rendered configuration failed' })).status, 'Degraded');
});

test('a refusal for an older generation is Progressing: the fix just applied is not judged yet', () => {
  assert.equal(health(recorded(7, 6, { accepted: false, reason: 'SecretNotFound', message: 'x' })).status, 'Progressing');
});

test('an MCPClient that cannot connect is Degraded, one still connecting Progressing, one connected everywhere Healthy', () => {
  const client = (states: { state: string; error?: string }[]) => ({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'MCPClient',
    metadata: { name: 'search', namespace: 'skybridge', generation: 2 },
    spec: {},
    status: nextStatus(
      undefined,
      desiredConditions(VALID, RENDERED, {
        kind: 'MCPClient',
        count: { live: states.length, implementing: states.length, serving: states.length, waiting: [] },
        mcp: states.map((c, i) => ({ identity: `proxy-${i}`, client: { tools: c.state === 'connected' ? 2 : 0, ...c } })),
      }),
      2,
      now,
    ),
  });
  const failed = health(client([{ state: 'connected' }, { state: 'error', error: 'connect ECONNREFUSED 10.0.0.9:443' }]));
  assert.equal(failed.status, 'Degraded');
  assert.match(failed.message, /^ConnectionFailed: proxy-1: connect ECONNREFUSED/);
  assert.equal(health(client([{ state: 'connected' }, { state: 'connecting' }])).status, 'Progressing');
  assert.equal(health(client([{ state: 'connected' }, { state: 'connected' }])).status, 'Healthy');
});

test('a Webhook whose deliveries a replica gave up on lately is Degraded; one delivering is Healthy', () => {
  const webhook = (givenUp: { identity: string; webhook: { exhausted: number; error?: string } }[]) => ({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'Webhook',
    metadata: { name: 'billing', namespace: 'skybridge', generation: 1 },
    spec: {},
    status: nextStatus(undefined, desiredConditions(VALID, RENDERED, { kind: 'Webhook', count: { live: 1, implementing: 1, serving: 1, waiting: [] }, givenUp }), 1, now),
  });
  const failing = health(webhook([{ identity: 'proxy-0', webhook: { exhausted: 2, error: 'receiver answered 500' } }]));
  assert.equal(failing.status, 'Degraded');
  assert.match(failing.message, /^DeliveriesExhausted: proxy-0: .*receiver answered 500/);
  assert.equal(health(webhook([])).status, 'Healthy');
});

test('a Provider whose InferencePool gives a replica no server is Degraded; one with servers everywhere is Healthy', () => {
  const provider = (pools: { identity: string; pool: { problem: string } }[]) => ({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'vllm', namespace: 'skybridge', generation: 1 },
    spec: { network_config: { inference_pool: { name: 'llama' } } },
    status: nextStatus(undefined, desiredConditions(VALID, RENDERED, { kind: 'Provider', count: { live: 1, implementing: 1, serving: 1, waiting: [] }, pools }), 1, now),
  });
  const missing = health(provider([{ identity: 'proxy-0', pool: { problem: 'InferencePool skybridge/llama does not exist' } }]));
  assert.equal(missing.status, 'Degraded');
  assert.match(missing.message, /^InferencePoolUnavailable: proxy-0: InferencePool skybridge\/llama does not exist/);
  assert.equal(health(provider([])).status, 'Healthy');
});

test('a Team served by every live replica is Healthy; a VirtualKey whose Team is gone is Degraded, naming the Team', () => {
  const served = { kind: 'Team', count: { live: 2, implementing: 2, serving: 2, waiting: [] } };
  const team = { apiVersion: 'gateway.skybridge.dev/v1alpha1', kind: 'Team', metadata: { name: 'ml', namespace: 'skybridge', generation: 1 }, spec: {}, status: nextStatus(undefined, desiredConditions(VALID, RENDERED, served), 1, now) };
  assert.deepEqual(health(team), { status: 'Healthy', message: 'Served by all 2 proxy replicas.' });
  const propagating = { ...team, status: nextStatus(undefined, desiredConditions(VALID, RENDERED, { ...served, count: { ...served.count, serving: 1, waiting: ['proxy-1'] } }), 1, now) };
  assert.equal(health(propagating).status, 'Progressing');
  const orphan = recorded(2, 2, { accepted: false, reason: 'ReferenceNotFound', message: "spec.team_id: Team 'ml' is not in the rendered configuration: no Team named 'ml' exists in the watched namespaces" });
  const h = health(orphan);
  assert.equal(h.status, 'Degraded');
  assert.match(h.message, /^ReferenceNotFound: spec\.team_id: Team 'ml' is not in the rendered configuration/);
});

test('health.yaml ships the same script for every kind, under the key Argo CD looks up', () => {
  const doc = parse(readFileSync(`${ROOT}deploy/argocd/health.yaml`, 'utf8')) as { data: Record<string, string> };
  assert.deepEqual(Object.keys(doc.data).sort(), KINDS.map((k) => `resource.customizations.health.gateway.skybridge.dev_${k.kind}`).sort());
  for (const [key, script] of Object.entries(doc.data)) assert.equal(script, SCRIPT, key);
});
