// What makes a one-resource change cost one resource in the operator: translations kept per CR
// (translation-cache.ts) and each fragment's laid-out text reused (stable-json.ts), giving exactly
// the bytes a full render gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderOutput } from '../../operator/src/render/output.ts';
import { RenderMemo } from '../../operator/src/render/memo.ts';
import { shardText } from '../../operator/src/render/shard.ts';
import { stableStringify, stableStringifyReusing } from '../../operator/src/render/stable-json.ts';
import { desiredState } from '../../operator/src/resources/desired.ts';
import { TranslationCache, type VersionedSecretLookup } from '../../operator/src/resources/translation-cache.ts';
import { translate } from '../../operator/src/resources/translate.ts';
import { assemble } from '../../proxy/src/config/kube-document.ts';
import { cr, ref, sampleResources, sampleSecrets, secrets } from './operator-fixtures.ts';
import type { CustomResource } from '../../operator/src/resources/kinds.ts';

const versioned = (versions: Record<string, string>): VersionedSecretLookup => ({ ...sampleSecrets(), version: (ns, name) => versions[`${ns}/${name}`] });

test('a render reusing laid-out fragments gives the same bytes as a full one, before and after a change', () => {
  const resources = sampleResources();
  const cache = new WeakMap<object, string>();
  const first = desiredState(resources, sampleSecrets());
  const full = renderOutput(first.input, { namespace: 'ns' });
  const reused = renderOutput(first.input, { namespace: 'ns', textCache: cache });
  assert.equal(reused.documentText, full.documentText);
  assert.equal(reused.documentText, stableStringify(first.input.document));
  assert.equal(reused.revision, full.revision);

  // One resource changes: its fragment is laid out again, the others come from the cache.
  const changed = resources.map((r) => (r.metadata.name === 'anthropic' ? cr('Provider', 'anthropic', { keys: [{ name: 'main', valueFrom: ref('anthropic-creds', 'key') }], network_config: { max_retries: 7 } }) : r));
  const cacheTranslations = new TranslationCache();
  const lookup = versioned({});
  desiredState(resources, lookup, undefined, (c) => cacheTranslations.translate(c, lookup));
  const second = desiredState(changed, lookup, undefined, (c) => cacheTranslations.translate(c, lookup));
  const again = renderOutput(second.input, { namespace: 'ns', textCache: cache });
  assert.equal(again.documentText, stableStringify(second.input.document));
  assert.match(again.documentText, /"max_retries": 7/);
  assert.notEqual(again.revision, full.revision);
});

test('stableStringifyReusing lays out nested values, empty ones and odd keys exactly like stableStringify', () => {
  const value = {
    providers: { b: { z: 1, a: [1, { y: null, x: 'é"\n' }], e: {}, f: [] }, a: { u: undefined, k: true } },
    governance: { virtual_keys: [{ id: 'k', n: [] }, { id: 'j', deep: { deeper: { deepest: [[], [{}]] } } }], budgets: [] },
    other: { list: [undefined, 2], s: 'x' },
  };
  const cache = new WeakMap<object, string>();
  const reusable = (p: string) => p === 'providers' || p === 'governance.virtual_keys';
  assert.equal(stableStringifyReusing(value, reusable, cache), stableStringify(value));
  // The second time from the cache: still the same.
  assert.equal(stableStringifyReusing(value, reusable, cache), stableStringify(value));
  assert.ok(cache.has(value.providers.b) && cache.has(value.governance.virtual_keys[1]));
  assert.ok(!cache.has(value.other));
});

test('shardText cuts an ASCII document into full parts without walking it, the same as the code-point walk', () => {
  const text = 'abcdefghij'.repeat(1000);
  const parts = shardText(text, 999);
  assert.equal(parts.join(''), text);
  assert.deepEqual(parts.map((p) => p.length), [...Array(10).fill(999), 10]);
  // One non-ASCII character takes the careful path.
  const mixed = `${text}é`;
  const m = shardText(mixed, 999);
  assert.equal(m.join(''), mixed);
  for (const p of m) assert.ok(Buffer.byteLength(p) <= 999);
});

test('the translation cache reuses a translation until its generation or a Secret it read changes', () => {
  const cache = new TranslationCache();
  const versions: Record<string, string> = { 'default/vk-team-a': '10' };
  const lookup = versioned(versions);
  const vk = (generation: number) => {
    const r = sampleResources().find((x) => x.kind === 'VirtualKey') as CustomResource;
    return { ...r, metadata: { ...r.metadata, uid: 'uid-vk', generation } };
  };
  const a = cache.translate(vk(1), lookup);
  assert.deepEqual(a, translate(vk(1), lookup));
  assert.equal(cache.translate(vk(1), lookup), a, 'unchanged: the same translation');
  assert.equal(cache.hits, 1);

  versions['default/vk-team-a'] = '11';
  const b = cache.translate(vk(1), lookup);
  assert.notEqual(b, a, 'the Secret it read changed');
  assert.equal(cache.translate(vk(1), lookup), b);

  const c = cache.translate(vk(2), lookup);
  assert.notEqual(c, b, 'a new generation');

  // A Secret that was missing and now exists.
  const missing = cr('VirtualKey', 'later', { valueFrom: ref('later', 'value'), provider_configs: [{ provider: 'openai' }] });
  const none: VersionedSecretLookup = { ...secrets({}), version: () => undefined };
  const refused = cache.translate(missing, none);
  assert.ok('reason' in refused);
  const now: VersionedSecretLookup = { ...secrets({ 'default/later': { value: 'sk-bf-later-123456' } }), version: () => '1' };
  assert.ok(!('reason' in cache.translate(missing, now)), 'translated again once the Secret exists');

  // Deleted CRs leave the cache.
  cache.retain([]);
  const before = cache.misses;
  cache.translate(vk(2), lookup);
  assert.equal(cache.misses, before + 1);
});

/** `count` VirtualKeys with names long enough that `sources` passes the inline limit at a few hundred. */
function manyKeys(count: number, description = (i: number) => `key ${i}`): { resources: CustomResource[]; lookup: VersionedSecretLookup } {
  const values: Record<string, string> = {};
  const resources: CustomResource[] = [cr('Provider', 'openai', { keys: [{ name: 'primary', valueFrom: ref('creds', 'openai') }] })];
  for (let i = 0; i < count; i++) {
    values[`vk${i}`] = `sk-bf-many-${String(i).padStart(6, '0')}`;
    resources.push(cr('VirtualKey', `key-${String(i).padStart(4, '0')}-${'n'.repeat(100)}`, { description: description(i), valueFrom: ref('creds', `vk${i}`), provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }));
  }
  values.openai = 'sk-openai-many';
  return { resources, lookup: { ...secrets({ 'default/creds': values }), version: () => '1' } };
}

test('past 64 KiB the sources leave the index for parts of their own, and the proxy reads them back', () => {
  const { resources, lookup } = manyKeys(300);
  const d = desiredState(resources, lookup);
  const out = renderOutput(d.input, { namespace: 'ns' });
  const index = JSON.parse(out.index.data['index.json']) as { sourceParts?: string[]; sources?: Record<string, string>; managed?: Record<string, string[]>; checksums: Record<string, string> };
  assert.ok(out.sourceParts.length >= 1);
  assert.deepEqual(index.sourceParts, out.sourceParts.map((p) => p.metadata.name));
  assert.match(out.sourceParts[0].metadata.name, /^skybridge-config-sources-0$/);
  assert.deepEqual(index.sources, {});
  assert.deepEqual(index.managed, {});
  assert.ok(Buffer.byteLength(out.index.data['index.json']) < 8 * 1024, `${Buffer.byteLength(out.index.data['index.json'])} bytes`);
  assert.ok(out.parts.length > 1, 'the document is cut at resource boundaries');

  const cms = new Map([...out.parts, ...out.sourceParts, out.index].map((o) => [o.metadata.name, o.data]));
  const shards = new Map(out.secrets.map((o) => [o.metadata.name, o.data]));
  const r = assemble((n) => cms.get(n), (n) => shards.get(n));
  assert.equal(r.state, 'complete');
  assert.ok(r.state === 'complete');
  assert.deepEqual(r.index.sources, d.input.sources);
  assert.deepEqual(r.index.managed, d.input.managed);
  // A sources part still being written is a write in progress, as for a document part.
  const stale = new Map(cms);
  stale.set(out.sourceParts[0].metadata.name, { 'config.part': '{}\n' });
  const partial = assemble((n) => stale.get(n), (n) => shards.get(n));
  assert.equal(partial.state, 'partial');
  assert.ok(partial.state === 'partial');
  assert.match(partial.reason, /sources part skybridge-config-sources-0 does not match its checksum/);

  // A small configuration keeps them inline, as before.
  const small = renderOutput(desiredState(sampleResources(), sampleSecrets()).input, { namespace: 'ns' });
  assert.deepEqual(small.sourceParts, []);
  assert.ok(Object.keys(JSON.parse(small.index.data['index.json']).sources).length > 0);
});

test('an edit changes one part; adding a resource changes at most the parts around it', () => {
  const { resources, lookup } = manyKeys(400);
  const render = (rs: CustomResource[]) => renderOutput(desiredState(rs, lookup).input, { namespace: 'ns' });
  const texts = (o: ReturnType<typeof render>) => new Map(o.parts.map((p) => [p.metadata.name, p.data['config.part']]));
  const diff = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
  const base = render(resources);
  assert.ok(base.parts.length >= 5, `${base.parts.length} parts`);

  // The description grows by a lot: the part grows, no boundary moves.
  const edited = resources.map((r, i) => (i === 200 ? { ...r, metadata: { ...r.metadata, generation: 2 }, spec: { ...(r.spec as object), description: 'x'.repeat(2000) } } : r));
  assert.equal(diff(texts(base), texts(render(edited))).length, 1);

  const { resources: more, lookup: moreSecrets } = manyKeys(401);
  const changedParts = diff(texts(base), texts(renderOutput(desiredState(more, moreSecrets).input, { namespace: 'ns' }))).length;
  assert.ok(changedParts >= 1 && changedParts <= 2, `${changedParts} parts changed`);
  // The sources parts follow the same rule.
  const sources = (o: ReturnType<typeof render>) => new Map(o.sourceParts.map((p) => [p.metadata.name, p.data['config.part']]));
  assert.equal(diff(sources(base), sources(render(edited))).length, 0);
});

test('a render memo gives the bytes of a full render and hashes only the part an edit changed; a changed secret value or source is worked out again', () => {
  const { resources, lookup } = manyKeys(600);
  const translations = new TranslationCache();
  const translator = (c: CustomResource) => translations.translate(c, lookup);
  const memo = new RenderMemo();
  const texts = new WeakMap<object, string>();
  const first = desiredState(resources, lookup, undefined, translator);
  const a = renderOutput(first.input, { namespace: 'ns', memo, textCache: texts });
  assert.deepEqual(a, renderOutput(first.input, { namespace: 'ns' }));
  const hashedFirst = memo.hashed;
  assert.equal(hashedFirst, a.parts.length + a.sourceParts.length);

  // One key's description: its part is hashed again, no other; the Secret data and sources are kept.
  const edited = resources.map((r, i) => (i === 7 ? { ...r, metadata: { ...r.metadata, generation: 2 }, spec: { ...(r.spec as object), description: 'edited' } } : r));
  const second = desiredState(edited, lookup, undefined, translator);
  const b = renderOutput(second.input, { namespace: 'ns', memo, textCache: texts });
  assert.deepEqual(b, renderOutput(second.input, { namespace: 'ns' }));
  assert.equal(memo.hashed - hashedFirst, 1);
  assert.deepEqual(b.secrets, a.secrets);
  assert.equal(b.index.data['index.json'] === a.index.data['index.json'], false);

  // A new key: a new Secret value and a new source, worked out again (the same bytes as a full render).
  const added = [...edited, cr('VirtualKey', 'zz-new', { valueFrom: ref('creds', 'openai'), provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] })];
  const third = desiredState(added, lookup, undefined, translator);
  assert.deepEqual(renderOutput(third.input, { namespace: 'ns', memo, textCache: texts }), renderOutput(third.input, { namespace: 'ns' }));
  const changedValue = { ...third.input, secrets: { ...third.input.secrets, [Object.keys(third.input.secrets)[0]]: Buffer.from('rotated').toString('base64') } };
  const rotated = renderOutput(changedValue, { namespace: 'ns', memo, textCache: texts });
  assert.deepEqual(rotated, renderOutput(changedValue, { namespace: 'ns' }));
  assert.notEqual(rotated.indexDocument.secretChecksum, b.indexDocument.secretChecksum);
});
