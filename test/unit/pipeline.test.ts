import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig } from '../../proxy/src/config/load.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { pickKey } from '../../proxy/src/pipeline/key-pool.ts';
import { backoffMs, canFallback, isRetryable, parseRetryAfter } from '../../proxy/src/pipeline/retry.ts';
import { chooseTargets } from '../../proxy/src/governance/targets.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const snap = compileSnapshot(
  checkConfig(
    {
      providers: {
        openai: {
          keys: [
            { name: 'heavy', value: 'a', weight: 3 },
            { name: 'light', value: 'b', weight: 1 },
            { name: 'mini-only', value: 'c', weight: 1, models: ['gpt-4o-mini'] },
            { name: 'off', value: 'd', weight: 0 },
          ],
          network_config: { retry_backoff_initial_ms: 100, retry_backoff_max_ms: 1000 },
        },
        anthropic: { keys: [{ name: 'k', value: 'v' }] },
        openrouter: { keys: [{ name: 'k', value: 'v' }] },
      },
    },
    't',
    {},
  ).config,
);
const openai = snap.providers.get('openai')!;

test('keys are chosen by weight among those that admit the model', () => {
  const counts: Record<string, number> = {};
  for (let i = 0; i < 8000; i++) {
    const k = pickKey({ provider: openai, model: 'gpt-4o' })!;
    counts[k.name] = (counts[k.name] ?? 0) + 1;
  }
  assert.deepEqual(Object.keys(counts).sort(), ['heavy', 'light']);
  const ratio = counts.heavy / counts.light;
  assert.ok(ratio > 2.5 && ratio < 3.6, `heavy:light = ${ratio}`);
  const forMini = new Set(Array.from({ length: 500 }, () => pickKey({ provider: openai, model: 'gpt-4o-mini' })!.name));
  assert.deepEqual([...forMini].sort(), ['heavy', 'light', 'mini-only']);
});

test('a retry avoids a key that just failed when another can serve', () => {
  const heavy = openai.keys[0];
  for (let i = 0; i < 200; i++) assert.equal(pickKey({ provider: openai, model: 'gpt-4o' }, new Set([heavy.id]))!.name, 'light');
});

test('no eligible key is a clear error', () => {
  const only = compileSnapshot(checkConfig({ providers: { openai: { keys: [{ name: 'x', value: 'v', models: ['a'] }] } } }, 't', {}).config).providers.get('openai')!;
  assert.throws(() => pickKey({ provider: only, model: 'b' }), /no key of provider 'openai' may serve model 'b'/);
});

/** The targets of a request without a virtual key on a gateway without routing rules: the ones it names. */
function resolveTargets(snapshot: typeof snap, model: string, fallbacks: string[] | undefined) {
  const request = { model, fallbacks, requestType: 'chat_completion', headers: () => ({}), params: () => ({}) };
  const chosen = chooseTargets(snapshot, undefined, request, { rules: snapshot.routing, capacity: () => ({ budget_used: 0, tokens_used: 0, request: 0 }), catalog: () => undefined });
  assert.equal(chosen.by, 'request');
  return chosen.targets();
}

test('targets: provider/model, fallbacks, provider/ keeps the model, org-style model names', () => {
  const t = resolveTargets(snap, 'openai/gpt-4o', ['anthropic/claude-x', 'openrouter/', 'openrouter/meta-llama/llama-3']);
  assert.deepEqual(t.map((x) => `${x.provider.name}|${x.model}`), ['openai|gpt-4o', 'anthropic|claude-x', 'openrouter|gpt-4o', 'openrouter|meta-llama/llama-3']);
  assert.equal(resolveTargets(snap, 'claude-3-5-haiku', undefined)[0].provider.name, 'anthropic');
  assert.throws(() => resolveTargets(snap, 'gemini/x', undefined), /provider 'gemini' is not configured/);
  assert.throws(() => resolveTargets(snap, 'mystery-model', undefined), (e: GatewayError) => e.status === 400 && e.param === 'model');
  assert.throws(() => resolveTargets(snap, 'openai/gpt-4o', ['anthropic/x', 'groq/y']), (e: GatewayError) => e.param === 'fallbacks[1]');
});

test('what is retried and what falls back', () => {
  const up = (status: number) => new GatewayError(status, 'x', { upstream: true });
  assert.ok(isRetryable(up(429)) && isRetryable(up(500)) && isRetryable(up(529)));
  assert.ok(!isRetryable(up(400)) && !isRetryable(up(401)) && !isRetryable(new GatewayError(500, 'ours')));
  assert.ok(isRetryable(new GatewayError(502, 'x', { type: 'upstream_connection_error' })));
  assert.ok(canFallback(up(401)) && canFallback(up(429)) && canFallback(up(503)));
  assert.ok(!canFallback(up(400)) && !canFallback(up(404)) && !canFallback(up(422)));
  assert.ok(canFallback(new GatewayError(400, 'x', { type: 'unsupported_operation' })));
});

test('backoff grows exponentially with jitter, is capped, and yields to Retry-After', () => {
  for (let i = 0; i < 100; i++) {
    const b0 = backoffMs(openai, 0, undefined);
    const b3 = backoffMs(openai, 3, undefined);
    const b9 = backoffMs(openai, 9, undefined);
    assert.ok(b0 >= 50 && b0 <= 100, `b0 ${b0}`);
    assert.ok(b3 >= 400 && b3 <= 800, `b3 ${b3}`);
    assert.ok(b9 >= 500 && b9 <= 1000, `b9 ${b9}`);
    assert.equal(backoffMs(openai, 0, 2), 2000);
  }
  assert.equal(parseRetryAfter('3'), 3);
  assert.equal(parseRetryAfter(undefined), undefined);
  const inTwo = new Date(Date.now() + 2000).toUTCString();
  const parsed = parseRetryAfter(inTwo)!;
  assert.ok(parsed > 0.5 && parsed <= 2);
});
