// The spec's "Virtual key provider configuration" rules, one test each, on the pure choice of targets
// (no routing rules: the virtual key chooses).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { keyId } from '../../proxy/src/schema/key-id.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { findVirtualKey } from '../../proxy/src/config/governance-runtime.ts';
import { chooseTargets, type CatalogLookup } from '../../proxy/src/governance/targets.ts';
import type { VirtualKeyRuntime } from '../../proxy/src/config/governance-runtime.ts';
import type { Snapshot } from '../../proxy/src/config/snapshot.ts';
import type { VirtualKeyProviderConfig } from '../../proxy/src/schema/governance.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const CATALOG: Record<string, string[]> = {
  openai: ['gpt-4o', 'gpt-4o-mini'],
  anthropic: ['claude-sonnet-4-5'],
  azure: ['gpt-4o'],
};
const catalog: CatalogLookup = (p, m) => (CATALOG[p] ? CATALOG[p].includes(m) : undefined);

const NO_CAPACITY = { budget_used: 0, tokens_used: 0, request: 0 };

function selectTargets(vk: VirtualKeyRuntime, snap: Snapshot, model: string, fallbacks: string[] | undefined, lookup: CatalogLookup, random = Math.random) {
  const request = { model, fallbacks, requestType: 'chat_completion', headers: () => ({}), params: () => ({}) };
  const chosen = chooseTargets(snap, vk, request, { rules: snap.routing, capacity: () => NO_CAPACITY, catalog: lookup, random });
  assert.equal(chosen.by, 'governance');
  return chosen.targets();
}

function setup(provider_configs: VirtualKeyProviderConfig[] | undefined, keys?: Record<string, { name: string; models?: string[] }[]>) {
  const provider = (name: string) => ({
    keys: (keys?.[name] ?? [{ name: `${name}-a` }, { name: `${name}-b` }]).map((k) => ({ value: `sk-${k.name}`, weight: 1, ...k })),
    network_config: { base_url: 'http://127.0.0.1:9' },
  });
  const config = {
    providers: { openai: provider('openai'), anthropic: provider('anthropic'), groq: provider('groq') },
    governance: { virtual_keys: [{ id: 'vk1', name: 'team-a', value: 'sk-bf-test-key-1', ...(provider_configs && { provider_configs }) }] },
  };
  const snap = compileSnapshot(checkConfig(config, 'test').config);
  const vk = findVirtualKey(snap.governance, 'sk-bf-test-key-1');
  assert.ok(vk);
  return { snap, vk };
}

const route = (pcs: VirtualKeyProviderConfig[] | undefined, model: string, fallbacks?: string[], random = Math.random) => {
  const { snap, vk } = setup(pcs);
  return selectTargets(vk, snap, model, fallbacks, catalog, random).map((t) => `${t.provider.name}/${t.model}`);
};

const denied = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof GatewayError && e.status === 403 && pattern.test(e.message));

test('a virtual key with no provider configs blocks every provider', () => {
  denied(() => route(undefined, 'gpt-4o'), /no provider configurations/);
  denied(() => route([], 'openai/gpt-4o'), /no provider configurations/);
});

test("allowed_models ['*'] admits what the catalog lists, and nothing else", () => {
  const pcs = [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }];
  assert.deepEqual(route(pcs, 'gpt-4o-mini'), ['openai/gpt-4o-mini']);
  // The catalog, not the key, is why: the message says so.
  denied(() => route(pcs, 'gpt-5-unknown'), /model 'gpt-5-unknown' is not in the model catalog of provider 'openai'/);
});

test('an empty allowed_models denies every model; an explicit list allows only those', () => {
  denied(() => route([{ provider: 'openai', allowed_models: [], key_ids: ['*'], weight: 1 }], 'openai/gpt-4o'), /model 'gpt-4o' of provider 'openai' is not allowed/);
  const pcs = [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }];
  assert.deepEqual(route(pcs, 'gpt-4o'), ['openai/gpt-4o']);
  denied(() => route(pcs, 'openai/gpt-4o-mini'), /not allowed/);
});

test('key_ids: empty or omitted denies all keys, a list restricts the pool, names resolve to ids', () => {
  denied(() => route([{ provider: 'openai', allowed_models: ['*'], weight: 1 }], 'openai/gpt-4o'), /not allowed/);
  denied(() => route([{ provider: 'openai', allowed_models: ['*'], key_ids: [], weight: 1 }], 'openai/gpt-4o'), /not allowed/);
  const { snap, vk } = setup([{ provider: 'openai', allowed_models: ['*'], key_ids: ['openai-b'], weight: 1 }]);
  const [t] = selectTargets(vk, snap, 'gpt-4o', undefined, catalog);
  assert.deepEqual([...(t.keyIds ?? [])], [keyId('openai', 'openai-b')]);
});

test('key-level model restrictions apply together with the virtual key', () => {
  const { snap, vk } = setup([{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }], {
    openai: [{ name: 'mini-only', models: ['gpt-4o-mini'] }, { name: 'any' }],
  });
  const [t] = selectTargets(vk, snap, 'gpt-4o', undefined, catalog);
  assert.deepEqual([...(t.keyIds ?? [])], [keyId('openai', 'any')]);
  const { snap: s2, vk: vk2 } = setup([{ provider: 'openai', allowed_models: ['*'], key_ids: ['mini-only'], weight: 1 }], {
    openai: [{ name: 'mini-only', models: ['gpt-4o-mini'] }, { name: 'any' }],
  });
  denied(() => selectTargets(vk2, s2, 'gpt-4o', undefined, catalog), /not allowed/);
});

test('a bare model picks among the providers that admit it, by normalised weight', () => {
  const pcs = [
    { provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 3 },
    { provider: 'groq', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 },
    { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 100 },
  ];
  // anthropic's weight does not count: it does not admit gpt-4o. openai gets 3/4.
  assert.equal(route(pcs, 'gpt-4o', undefined, () => 0.74)[0], 'openai/gpt-4o');
  assert.equal(route(pcs, 'gpt-4o', undefined, () => 0.76)[0], 'groq/gpt-4o');
});

test('cross-provider routing is never automatic: a model only goes where it is admitted', () => {
  const pcs = [
    { provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 },
    { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 },
  ];
  for (let i = 0; i < 20; i++) assert.deepEqual(route(pcs, 'claude-sonnet-4-5'), ['anthropic/claude-sonnet-4-5']);
});

test('provider/model bypasses weighting, even to a null-weight provider', () => {
  const pcs = [
    { provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 },
    { provider: 'groq', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: null },
  ];
  for (let i = 0; i < 10; i++) assert.equal(route(pcs, 'gpt-4o')[0], 'openai/gpt-4o');
  assert.equal(route(pcs, 'groq/gpt-4o')[0], 'groq/gpt-4o');
  denied(() => route(pcs, 'anthropic/claude-sonnet-4-5'), /provider 'anthropic' is not allowed/);
});

test("without request fallbacks the key's other providers follow, highest weight first, null last", () => {
  const pcs = [
    { provider: 'groq', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: null },
    { provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 },
    { provider: 'anthropic', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 5 },
  ];
  assert.deepEqual(route(pcs, 'openai/gpt-4o'), ['openai/gpt-4o', 'anthropic/gpt-4o', 'groq/gpt-4o']);
});

test('request fallbacks are kept untouched (no automatic ones added), but must be allowed', () => {
  const pcs = [
    { provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['*'], weight: 1 },
    { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 5 },
  ];
  assert.deepEqual(route(pcs, 'openai/gpt-4o', ['openai/gpt-4o-mini']), ['openai/gpt-4o', 'openai/gpt-4o-mini']);
  denied(() => route(pcs, 'openai/gpt-4o', ['groq/gpt-4o']), /fallback 'groq\/gpt-4o' is not allowed/);
});

test('virtual keys are found by value only, and an inactive key is still found (auth decides)', () => {
  const { snap } = setup([]);
  assert.equal(findVirtualKey(snap.governance, 'sk-bf-test-key-2'), undefined);
  assert.equal(findVirtualKey(snap.governance, 'sk-bf-test-key-1')?.record.id, 'vk1');
});
