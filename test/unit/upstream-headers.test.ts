// The upstream headers a provider's key starts from, made once per key: a key's new value, another
// adapter or provider never gets headers made for something else, and each request gets its own copy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { baseHeaders } from '../../proxy/src/pipeline/upstream-headers.ts';
import { ADAPTERS } from '../../proxy/src/providers/registry.ts';

const providers = compileSnapshot(
  checkConfig(
    {
      providers: {
        openai: { keys: [{ name: 'a', value: 'sk-a', weight: 1 }, { name: 'b', value: 'sk-b', weight: 1 }], network_config: { extra_headers: { 'x-team': 'blue' } } },
        anthropic: { keys: [{ name: 'a', value: 'sk-ant', weight: 1 }] },
      },
    },
    'test',
  ).config,
).providers;
const openai = providers.get('openai')!;
const anthropic = providers.get('anthropic')!;

test('each key gets its own auth headers after the extra headers, and each call its own object', () => {
  const adapter = ADAPTERS.openai;
  const first = baseHeaders(openai, adapter, openai.keys[0]);
  assert.deepEqual(Object.entries(first), [['x-team', 'blue'], ['authorization', 'Bearer sk-a']]);
  first.accept = 'text/plain';
  assert.deepEqual(baseHeaders(openai, adapter, openai.keys[0]), { 'x-team': 'blue', authorization: 'Bearer sk-a' });
  assert.deepEqual(baseHeaders(openai, adapter, openai.keys[1]), { 'x-team': 'blue', authorization: 'Bearer sk-b' });
  assert.deepEqual(baseHeaders(anthropic, ADAPTERS.anthropic, anthropic.keys[0]), { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant' });
  assert.deepEqual(baseHeaders({ ...openai, extraHeaders: {} }, adapter, undefined), {});
});

test("a key's changed value, another adapter or other extra headers are never served the headers made before", () => {
  const key = { ...openai.keys[0] };
  assert.equal(baseHeaders(openai, ADAPTERS.openai, key).authorization, 'Bearer sk-a');
  key.value = 'sk-a2';
  assert.equal(baseHeaders(openai, ADAPTERS.openai, key).authorization, 'Bearer sk-a2');
  assert.deepEqual(baseHeaders(openai, ADAPTERS.azure, key), { 'x-team': 'blue', 'api-key': 'sk-a2' });
  assert.deepEqual(baseHeaders({ ...openai, extraHeaders: { 'x-team': 'red' } }, ADAPTERS.azure, key), { 'x-team': 'red', 'api-key': 'sk-a2' });
});
