// Assembling and verifying the operator's rendered configuration (index, parts, Secret), and
// applying it through ConfigService.replace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assemble } from '../../proxy/src/config/kube-document.ts';
import { parseIndex, secretChecksum } from '../../proxy/src/schema/config-index.ts';
import { checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/source.ts';
import { ConfigService, ManagedConfigError, type ConfigOrigin } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';
import { lookups, renderConfig, type KubeObject } from '../helpers/kube-render.ts';

const KEY = 'PROVIDER_GATEWAY_OPENAI_KEY0';
const document = {
  providers: {
    openai: {
      keys: [{ name: 'key0', value: `env.${KEY}`, weight: 1 }],
      network_config: { base_url: 'http://127.0.0.1:9/openai', max_retries: 0 },
    },
  },
  governance: { virtual_keys: [{ id: 'vk-checkout', name: 'checkout', value: 'env.VIRTUALKEY_TEAM_A_CHECKOUT_VALUE', is_active: true }] },
};
const secrets = { [KEY]: 'sk-from-secret', VIRTUALKEY_TEAM_A_CHECKOUT_VALUE: 'sk-bf-checkout' };
const render = () =>
  renderConfig(document, secrets, {
    namespace: 'gateway',
    partChars: 64,
    managed: { providers: ['openai'], virtual_keys: ['vk-checkout'] },
    sources: { 'providers/openai': 'Provider gateway/openai', 'virtual_keys/vk-checkout': 'VirtualKey team-a/checkout' },
  });

const assembleFrom = (objects: KubeObject[]) => {
  const l = lookups(objects);
  return assemble(l.configMap, l.secret);
};

test('a complete rendering in several parts assembles into the document, secrets decoded', () => {
  const r = render();
  assert.ok(r.parts.length > 3, 'the document is split into several parts');
  const result = assembleFrom(r.all);
  assert.equal(result.state, 'complete');
  assert.ok(result.state === 'complete');
  assert.deepEqual(result.document, document);
  assert.deepEqual(result.env, secrets);
  assert.deepEqual(result.index.sources['virtual_keys/vk-checkout'], 'VirtualKey team-a/checkout');
  assert.deepEqual(result.index.managed.providers, ['openai']);
  // And env.VAR references resolve against the Secret, not the process environment.
  const { config } = checkConfig(result.document, 'kubernetes', result.env);
  assert.equal(config.providers?.openai.keys?.[0].value, 'sk-from-secret');
});

test('no index ConfigMap: nothing rendered yet', () => {
  const r = render();
  assert.deepEqual(assembleFrom([...r.parts, r.secret]), { state: 'absent' });
});

test('a part the index names but that is not there is a write in progress', () => {
  const r = render();
  const result = assembleFrom(r.all.filter((o) => o.metadata.name !== 'skybridge-config-part-2'));
  assert.equal(result.state, 'partial');
  assert.ok(result.state === 'partial');
  assert.match(result.reason, /part skybridge-config-part-2 is missing/);
  assert.equal(result.revision, r.indexDocument.revision);
});

test('a part whose content does not match its checksum is a write in progress', () => {
  const r = render();
  // The operator wrote the next revision's part 1, the index still describes the previous one.
  r.parts[1].data['config.part'] = `X${r.parts[1].data['config.part'].slice(1)}`;
  const result = assembleFrom(r.all);
  assert.equal(result.state, 'partial');
  assert.ok(result.state === 'partial');
  assert.match(result.reason, /skybridge-config-part-1 does not match its checksum/);
});

test('a Secret that does not match the index (rotation half written, or missing) is a write in progress', () => {
  const r = render();
  r.secret.data[KEY] = Buffer.from('sk-rotated').toString('base64');
  const rotated = assembleFrom(r.all);
  assert.equal(rotated.state, 'partial');
  assert.ok(rotated.state === 'partial');
  assert.match(rotated.reason, /Secret skybridge-secrets does not match/);

  const missing = assembleFrom(r.all.filter((o) => o.kind !== 'Secret'));
  assert.equal(missing.state, 'partial');
  assert.ok(missing.state === 'partial');
  assert.match(missing.reason, /Secret skybridge-secrets is missing/);
});

test('a document without secrets needs no Secret: an absent one counts as empty', () => {
  const r = renderConfig({ providers: {} }, {}, { namespace: 'gateway' });
  const result = assembleFrom([...r.parts, r.index]);
  assert.equal(result.state, 'complete');
  assert.equal(secretChecksum(undefined), secretChecksum({}));
});

test('parts listed in the wrong order fail the revision check', () => {
  const r = render();
  const index = JSON.parse(r.index.data['index.json']) as { parts: string[] };
  index.parts.reverse();
  r.index.data['index.json'] = JSON.stringify(index);
  const result = assembleFrom(r.all);
  assert.equal(result.state, 'invalid');
  assert.ok(result.state === 'invalid');
  assert.match(result.reason, /does not match the index revision/);
});

test('an unreadable index is invalid, naming what is wrong', () => {
  const r = render();
  r.index.data['index.json'] = '{"revision": "x"';
  const notJson = assembleFrom(r.all);
  assert.equal(notJson.state, 'invalid');
  assert.throws(() => parseIndex('{"revision":"x","parts":[],"checksums":{},"secret":"s","secretChecksum":"c"}'), /parts/);
  assert.throws(() => parseIndex('{"parts":["a"],"checksums":{},"secret":"s","secretChecksum":"c"}'), /revision: is required/);
});

const origin = (sources: Record<string, string> = {}): ConfigOrigin => ({ managedBy: 'kubernetes', editWith: 'the custom resources', sources });

function kubeService(): ConfigService {
  const empty = checkConfig({}, 'empty');
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(empty.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: empty.raw });
  service.setOrigin(origin());
  return service;
}

test('replace() swaps in a valid document resolved against the given secrets, and keeps it on a bad one', async () => {
  const service = kubeService();
  const first = await service.replace(document, { source: 'kubernetes', env: secrets, origin: origin({ 'providers/openai': 'Provider gateway/openai' }) });
  assert.equal(service.current(), first);
  assert.equal(first.providers.get('openai')?.keys[0].value, 'sk-from-secret');
  // The document keeps its references (what /api shows, masked); the snapshot has the values.
  assert.equal(service.document().providers?.openai.keys?.[0].value, `env.${KEY}`);
  assert.equal(service.origin()?.sources['providers/openai'], 'Provider gateway/openai');

  // The Secret lacks the key the document refers to: rejected, the last good one keeps serving.
  await assert.rejects(service.replace(document, { source: 'kubernetes', env: {}, origin: origin() }), (err: unknown) => err instanceof ConfigError && /PROVIDER_GATEWAY_OPENAI_KEY0 is not set/.test(err.message));
  assert.equal(service.current(), first);
  assert.equal(service.origin()?.sources['providers/openai'], 'Provider gateway/openai');

  const rotated = await service.replace(document, { source: 'kubernetes', env: { ...secrets, [KEY]: 'sk-rotated' }, origin: origin() });
  assert.notEqual(rotated.hash, first.hash);
  assert.equal(service.current().providers.get('openai')?.keys[0].value, 'sk-rotated');
});

test('update() is refused while Kubernetes owns the document', async () => {
  const service = kubeService();
  await assert.rejects(service.update(() => undefined), ManagedConfigError);
});

test("a rendered document whose resource names another resource's Secret entry is refused, naming the path; its own entries are fine", () => {
  const leak = structuredClone(document) as typeof document & { webhooks?: unknown[] };
  (leak.providers.openai.network_config as Record<string, unknown>).extra_headers = { 'x-leak': 'env.VIRTUALKEY_TEAM_A_CHECKOUT_VALUE' };
  const rendered = (doc: unknown, sources: Record<string, string>) => renderConfig(doc as Record<string, unknown>, secrets, { namespace: 'gateway', managed: { providers: ['openai'], virtual_keys: ['vk-checkout'] }, sources });
  const sources = { 'providers/openai': 'Provider gateway/openai', 'virtual_keys/vk-checkout': 'VirtualKey team-a/checkout' };
  const got = assembleFrom(rendered(leak, sources).all);
  assert.equal(got.state, 'invalid');
  assert.match((got as { reason: string }).reason, /providers\.openai\.network_config\.extra_headers\.x-leak \(Provider gateway\/openai\): env\.VIRTUALKEY_TEAM_A_CHECKOUT_VALUE is a Secret entry rendered for another resource \(VIRTUALKEY_TEAM_A_CHECKOUT_\.\.\.\)/);
  // A nested name (team-a/checkout-b) owns what its longer prefix matches, not team-a/checkout.
  const nested = structuredClone(document);
  nested.governance.virtual_keys.push({ id: 'vk-b', name: 'b', value: 'env.VIRTUALKEY_TEAM_A_CHECKOUT_B_VALUE', is_active: true });
  nested.governance.virtual_keys[0].value = 'env.VIRTUALKEY_TEAM_A_CHECKOUT_B_VALUE';
  const r = renderConfig(nested, { ...secrets, VIRTUALKEY_TEAM_A_CHECKOUT_B_VALUE: 'sk-bf-b' }, { namespace: 'gateway', managed: {}, sources: { ...sources, 'virtual_keys/vk-b': 'VirtualKey team-a/checkout-b' } });
  const nestedGot = assembleFrom(r.all);
  assert.equal(nestedGot.state, 'invalid');
  assert.match((nestedGot as { reason: string }).reason, /^[^;]*governance\.virtual_keys\[0\]\.value \(VirtualKey team-a\/checkout\): env\.VIRTUALKEY_TEAM_A_CHECKOUT_B_VALUE/);
  // Outside any resource, an entry rendered for one is refused too; entries of no listed resource are not checked.
  const outside = { ...structuredClone(document), webhooks: [{ name: 'w', url: 'https://x.example.com', events: ['async_job.completed'], headers: { 'x-leak': `env.${KEY}` } }] };
  assert.match((assembleFrom(rendered(outside, sources).all) as { reason: string }).reason, /webhooks\[0\]\.headers\.x-leak: env\.PROVIDER_GATEWAY_OPENAI_KEY0 is a Secret entry rendered for another resource/);
  assert.equal(assembleFrom(rendered(document, sources).all).state, 'complete');
  assert.equal(assembleFrom(rendered(leak, {}).all).state, 'complete', 'an index without sources (an older operator) is not checked');
});
