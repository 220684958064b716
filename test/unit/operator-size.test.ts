// Size ceilings: a CR whose share cannot fit is refused (TooLarge) alone; the rest renders, with the
// secret values packed into several Secret shards that a proxy reads back as one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { renderOutput } from '../../operator/src/render/output.ts';
import { DEFAULT_LIMITS, packSecrets, type SizeLimits } from '../../operator/src/render/limits.ts';
import { desiredState } from '../../operator/src/resources/desired.ts';
import { assemble } from '../../proxy/src/config/kube-document.ts';
import { cr, ref, secrets } from './operator-fixtures.ts';

const openai = () => cr('Provider', 'openai', { keys: [{ name: 'primary', valueFrom: ref('creds', 'openai'), weight: 1 }] });
const vk = (n: number) =>
  cr('VirtualKey', `vk-${String(n).padStart(3, '0')}`, { valueFrom: ref('vks', `v${n}`), provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }, {
    created: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
  });
const vkSecrets = (count: number, valueBytes: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, n) => [`v${n}`, `sk-bf-${String(n).padStart(4, '0')}-`.padEnd(valueBytes, 'x')]));

test('one Secret value larger than a shard: that Provider alone is TooLarge, naming size and limit; the rest renders', () => {
  const limits: SizeLimits = { ...DEFAULT_LIMITS, secretShardBytes: 4096 };
  const big = cr('Provider', 'big', { keys: [{ name: 'k', valueFrom: ref('creds', 'big') }] });
  const d = desiredState([openai(), big, vk(1)], secrets({ 'default/creds': { openai: 'sk-openai', big: 'x'.repeat(5000) }, 'default/vks': vkSecrets(2, 40) }), limits);
  const verdict = d.verdicts.get('Provider default/big');
  assert.equal(verdict?.accepted, false);
  assert.equal(verdict?.reason, 'TooLarge');
  assert.match(verdict?.message ?? '', /PROVIDER_DEFAULT_BIG_\S+ is 5 KiB; one value can be at most 4 KiB/);
  assert.equal(d.verdicts.get('Provider default/openai')?.reason, 'Valid');
  assert.equal(d.verdicts.get('VirtualKey default/vk-001')?.reason, 'Valid');
  assert.deepEqual(Object.keys(d.input.document.providers as object), ['openai']);
  assert.ok(!Object.keys(d.input.secrets).some((k) => k.includes('BIG')));
});

test('secrets over one shard are packed into several Secrets that a proxy reads back as one; past the last shard the newest are TooLarge', () => {
  const limits: SizeLimits = { ...DEFAULT_LIMITS, secretShardBytes: 1024 };
  const resources = [openai(), ...Array.from({ length: 12 }, (_, n) => vk(n))];
  const lookup = secrets({ 'default/creds': { openai: 'sk-openai' }, 'default/vks': vkSecrets(12, 300) });
  const d = desiredState(resources, lookup, limits);
  const refused = [...d.verdicts].filter(([, v]) => v.reason === 'TooLarge').map(([r]) => r).sort();
  // 4 shards of 1 KiB hold three 300-byte values (with their keys) each: the newest ones are left out.
  assert.ok(refused.length >= 1 && refused.length < 12, refused.join());
  assert.deepEqual(refused, resources.slice(-refused.length).map((r) => `VirtualKey default/${r.metadata.name}`));
  assert.match(d.verdicts.get(refused[0])?.message ?? '', /more than the 4 Secret shards of 1 KiB hold/);
  assert.equal(d.verdicts.get('VirtualKey default/vk-000')?.reason, 'Valid');

  const out = renderOutput(d.input, { namespace: 'skybridge', maxSecretShardBytes: 1024 });
  assert.deepEqual(out.indexDocument.secrets, ['skybridge-secrets', 'skybridge-secrets-1', 'skybridge-secrets-2', 'skybridge-secrets-3']);
  for (const s of out.secrets) {
    const bytes = Object.entries(s.data).reduce((n, [k, v]) => n + k.length + Buffer.from(v, 'base64').length, 0);
    assert.ok(bytes <= 1024, `${s.metadata.name}: ${bytes}`);
  }
  const cms = new Map([...out.parts, out.index].map((o) => [o.metadata.name, o.data]));
  const shards = new Map(out.secrets.map((s) => [s.metadata.name, s.data]));
  const read = assemble((n) => cms.get(n), (n) => shards.get(n));
  assert.equal(read.state, 'complete');
  assert.ok(read.state === 'complete');
  assert.equal(Object.keys(read.env).length, 1 + 12 - refused.length);
  // A shard half written is a write in progress, not a configuration with keys missing.
  shards.delete('skybridge-secrets-2');
  const partial = assemble((n) => cms.get(n), (n) => shards.get(n));
  assert.equal(partial.state, 'partial');
  assert.ok(partial.state === 'partial');
  assert.match(partial.reason, /Secret skybridge-secrets-2 is missing/);
});

test('an index over its limit: the newest CRs are TooLarge and the index that is written fits', () => {
  const limits: SizeLimits = { ...DEFAULT_LIMITS, indexBytes: 6 * 1024 };
  const resources = [openai(), ...Array.from({ length: 80 }, (_, n) => vk(n))];
  const d = desiredState(resources, secrets({ 'default/creds': { openai: 'sk-openai' }, 'default/vks': vkSecrets(80, 40) }), limits);
  const refused = [...d.verdicts].filter(([, v]) => v.reason === 'TooLarge').map(([r]) => r).sort();
  assert.ok(refused.length > 0 && refused.length < 80, String(refused.length));
  assert.deepEqual(refused, resources.slice(-refused.length).map((r) => `VirtualKey default/${r.metadata.name}`));
  assert.match(d.verdicts.get(refused[0])?.message ?? '', /the index \(ConfigMap skybridge-config-index\) would be \d+ KiB, over its 6 KiB limit/);
  const out = renderOutput(d.input, { namespace: 'skybridge' });
  assert.ok(Buffer.byteLength(out.index.data['index.json']) <= 6 * 1024, String(Buffer.byteLength(out.index.data['index.json'])));
});

test('packSecrets is byte-stable and refuses only what cannot fit', () => {
  const data = Object.fromEntries(Array.from({ length: 10 }, (_, n) => [`K${n}`, Buffer.from('v'.repeat(100)).toString('base64')]));
  assert.deepEqual(packSecrets(data, 250, 5), packSecrets(Object.fromEntries(Object.entries(data).reverse()), 250, 5));
  assert.equal(packSecrets(data, 250, 5)?.length, 5);
  assert.equal(packSecrets(data, 250, 4), undefined);
  assert.equal(packSecrets({ K: Buffer.from('v'.repeat(300)).toString('base64') }, 250, 5), undefined);
  assert.deepEqual(packSecrets({}, 250, 5), [{}]);
});
