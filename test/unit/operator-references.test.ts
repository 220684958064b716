// Cross-resource references and blast radius: a broken reference disables only what depends on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredState } from '../../operator/src/resources/desired.ts';
import { cr, ref, secrets } from './operator-fixtures.ts';

const lookup = () =>
  secrets({
    'default/creds': { openai: 'sk-openai-1', 'openai-2': 'sk-openai-2', anthropic: 'sk-ant-1', vk: 'sk-bf-checkout-0001' },
  });
const provider = (name: string, ...keys: string[]) => cr('Provider', name, { keys: keys.map((k) => ({ name: k, valueFrom: ref('creds', k) })) });
const vk = (name: string, ...providers: string[]) =>
  cr('VirtualKey', name, { valueFrom: ref('creds', 'vk'), provider_configs: providers.map((p) => ({ provider: p, allowed_models: ['*'], key_ids: ['*'] })) });
type Doc = { providers?: Record<string, { keys: { name: string }[] }>; governance?: { virtual_keys?: { id: string; provider_configs: { provider: string }[] }[]; routing_rules?: { id: string }[] } };

test('a routing rule targeting a provider no Provider defines is refused (ReferenceNotFound) and left out of the render', () => {
  const rule = cr('RoutingRule', 'to-groq', { cel_expression: 'model == "fast"', targets: [{ provider: 'groq', model: 'llama', weight: 1 }] });
  const good = cr('RoutingRule', 'to-openai', { cel_expression: 'model == "x"', targets: [{ provider: 'openai', weight: 1 }] });
  const d = desiredState([provider('openai', 'openai'), rule, good], lookup());
  const v = d.verdicts.get('RoutingRule default/to-groq');
  assert.equal(v?.accepted, false);
  assert.equal(v?.reason, 'ReferenceNotFound');
  assert.match(v?.message ?? '', /spec\.targets\[0\]\.provider: provider 'groq' is not defined by any Provider/);
  assert.deepEqual((d.input.document as Doc).governance?.routing_rules?.map((r) => r.id), ['to-openai']);
  assert.equal(d.verdicts.get('RoutingRule default/to-openai')?.reason, 'Valid');
});

test('a routing rule whose fallback names an undefined provider, or scoped to a missing virtual key, is refused', () => {
  const fallback = cr('RoutingRule', 'fb', { targets: [{ provider: 'openai', weight: 1 }], fallbacks: ['mistral/large'] });
  const scoped = cr('RoutingRule', 'scoped', { targets: [{ provider: 'openai', weight: 1 }], scope: 'virtual_key', scope_id: 'ghost' });
  const fine = cr('RoutingRule', 'fine', { targets: [{ provider: 'openai', weight: 1 }], scope: 'virtual_key', scope_id: 'checkout' });
  const d = desiredState([provider('openai', 'openai'), vk('checkout', 'openai'), fallback, scoped, fine], lookup());
  assert.match(d.verdicts.get('RoutingRule default/fb')?.message ?? '', /spec\.fallbacks\[0\]: provider 'mistral' is not defined/);
  assert.match(d.verdicts.get('RoutingRule default/scoped')?.message ?? '', /spec\.scope_id: virtual key 'ghost' is not defined/);
  assert.equal(d.verdicts.get('RoutingRule default/scoped')?.reason, 'ReferenceNotFound');
  assert.equal(d.verdicts.get('RoutingRule default/fine')?.reason, 'Valid');
});

test('a rule scoped to a virtual key that is refused is refused in turn', () => {
  const key = cr('VirtualKey', 'broken', { valueFrom: ref('creds', 'missing-key'), provider_configs: [{ provider: 'openai' }] });
  const rule = cr('RoutingRule', 'r', { targets: [{ provider: 'openai', weight: 1 }], scope: 'virtual_key', scope_id: 'broken' });
  const d = desiredState([provider('openai', 'openai'), key, rule], lookup());
  assert.equal(d.verdicts.get('VirtualKey default/broken')?.reason, 'SecretNotFound');
  assert.equal(d.verdicts.get('RoutingRule default/r')?.reason, 'ReferenceNotFound');
});

test('deleting one Provider: the virtual key keeps its other providers and says which part is degraded', () => {
  const d = desiredState([provider('openai', 'openai'), vk('checkout', 'openai', 'anthropic')], lookup());
  const v = d.verdicts.get('VirtualKey default/checkout');
  assert.equal(v?.accepted, true);
  assert.equal(v?.reason, 'Degraded');
  assert.match(v?.message ?? '', /spec\.provider_configs\[1\]\.provider: provider 'anthropic' is not configured/);
  const key = (d.input.document as Doc).governance?.virtual_keys?.[0];
  assert.equal(key?.id, 'checkout');
  assert.deepEqual(key?.provider_configs.map((p) => p.provider), ['openai']);
  // The key's value is still rendered: callers keep working for openai.
  assert.ok(Object.keys(d.input.secrets).some((k) => k.startsWith('VIRTUALKEY_DEFAULT_CHECKOUT')));
});

test('the spec index in a degraded message stays the spec\'s when several rounds narrow the key', () => {
  const d = desiredState([provider('anthropic', 'anthropic'), vk('checkout', 'openai', 'groq', 'anthropic')], lookup());
  const v = d.verdicts.get('VirtualKey default/checkout');
  assert.equal(v?.reason, 'Degraded');
  assert.match(v?.message ?? '', /provider_configs\[0\]\.provider: provider 'openai'/);
  assert.match(v?.message ?? '', /provider_configs\[1\]\.provider: provider 'groq'/);
  assert.doesNotMatch(v?.message ?? '', /provider_configs\[2\]/);
});

test('a virtual key left with no provider is refused (an empty list would allow every provider)', () => {
  const d = desiredState([provider('openai', 'openai'), vk('checkout', 'anthropic')], lookup());
  const v = d.verdicts.get('VirtualKey default/checkout');
  assert.equal(v?.accepted, false);
  assert.equal(v?.reason, 'ReferenceNotFound');
  assert.equal((d.input.document as Doc).governance?.virtual_keys, undefined);
});

test('removing one key from a referenced Secret drops only that provider key; the provider and its virtual keys stay', () => {
  const before = desiredState([provider('openai', 'openai', 'openai-2'), vk('checkout', 'openai')], lookup());
  assert.equal(before.verdicts.get('Provider default/openai')?.reason, 'Valid');
  const without = secrets({ 'default/creds': { openai: 'sk-openai-1', vk: 'sk-bf-checkout-0001' } });
  const d = desiredState([provider('openai', 'openai', 'openai-2'), vk('checkout', 'openai')], without);
  const p = d.verdicts.get('Provider default/openai');
  assert.equal(p?.accepted, true);
  assert.equal(p?.reason, 'Degraded');
  assert.match(p?.message ?? '', /spec\.keys\[1\]\.valueFrom: Secret default\/creds has no key 'openai-2': this key is left out/);
  assert.deepEqual((d.input.document as Doc).providers?.openai.keys.map((k) => k.name), ['openai']);
  assert.equal(d.verdicts.get('VirtualKey default/checkout')?.reason, 'Valid');
  // The dropped key's value is not rendered.
  assert.deepEqual(Object.keys(d.input.secrets).filter((k) => k.startsWith('PROVIDER_')), ['PROVIDER_DEFAULT_OPENAI_KEYS_0_VALUE']);
});

test('a provider with every key broken is refused; its virtual key keeps the providers that work', () => {
  const without = secrets({ 'default/creds': { anthropic: 'sk-ant-1', vk: 'sk-bf-checkout-0001' } });
  const d = desiredState([provider('openai', 'openai'), provider('anthropic', 'anthropic'), vk('checkout', 'openai', 'anthropic')], without);
  assert.equal(d.verdicts.get('Provider default/openai')?.reason, 'SecretNotFound');
  assert.equal(d.verdicts.get('VirtualKey default/checkout')?.reason, 'Degraded');
  assert.deepEqual((d.input.document as Doc).governance?.virtual_keys?.[0].provider_configs.map((p) => p.provider), ['anthropic']);
});
