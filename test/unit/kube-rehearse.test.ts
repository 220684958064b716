// The proxy's start-up rehearsal of reloads (config/kube-rehearse.ts, ConfigService.rehearse): edited
// copies of the rendering that assemble like an operator's edit, and a service that rehearsed them
// serving, answering and reloading exactly as one that did not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assemble, AssemblyMemo, type DataLookup } from '../../proxy/src/config/kube-document.ts';
import { rehearsalEdits } from '../../proxy/src/config/kube-rehearse.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/source.ts';
import { ConfigService } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';
import { lookups, renderConfig } from '../helpers/kube-render.ts';

const KEY = 'PROVIDER_GATEWAY_OPENAI_KEY0';
const vk = (i: number, description = `key ${i}`) => ({ id: `vk-${i}`, name: `key-${i}`, description, value: `env.VIRTUALKEY_GATEWAY_VK_${i}_VALUE`, is_active: true });
const documentWith = (keys: ReturnType<typeof vk>[]) => ({
  providers: { openai: { keys: [{ name: 'key0', value: `env.${KEY}`, weight: 1 }], network_config: { base_url: 'http://127.0.0.1:9/openai', max_retries: 0 } } },
  governance: {
    virtual_keys: keys,
    routing_rules: [{ id: 'rule-1', name: 'rule-1', description: 'to openai', cel_expression: 'headers["x-route"] == "a"', targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }] }],
  },
});
const KEYS = 8;
const document = documentWith(Array.from({ length: KEYS }, (_, i) => vk(i)));
const secrets: Record<string, string> = { [KEY]: 'sk-from-secret' };
for (let i = 0; i < KEYS; i++) secrets[`VIRTUALKEY_GATEWAY_VK_${i}_VALUE`] = `sk-bf-key-${i}`;
const sources: Record<string, string> = { 'providers/openai': 'Provider gateway/openai' };
for (let i = 0; i < KEYS; i++) sources[`virtual_keys/vk-${i}`] = `VirtualKey gateway/vk-${i}`;
const render = (doc: unknown) => lookups(renderConfig(doc, secrets, { namespace: 'gateway', partChars: 200, managed: { providers: ['openai'], virtual_keys: Object.keys(sources).filter((s) => s.startsWith('virtual_keys/')).map((s) => s.slice(13)) }, sources }).all);

test('rehearsed edits assemble complete, each with one description changed; the rendering itself is untouched', () => {
  const { configMap, secret } = render(document);
  const edits = rehearsalEdits(configMap);
  assert.ok(edits.length >= 2, `edits from parts spread over the document: ${edits.length}`);
  const changed = new Set<string>();
  for (const edit of edits) {
    const a = assemble(edit, secret);
    assert.ok(a.state === 'complete', JSON.stringify(a));
    const doc = a.document as typeof document;
    const differing = [...doc.governance.virtual_keys, ...doc.governance.routing_rules].filter((r) => !JSON.stringify(document).includes(JSON.stringify(r)));
    assert.equal(differing.length, 1, 'one resource differs');
    assert.match(differing[0].description, /^\./);
    changed.add(differing[0].id);
  }
  assert.equal(changed.size, edits.length, 'each edit changes another resource');
  const now = assemble(configMap, secret);
  assert.ok(now.state === 'complete');
  assert.deepEqual(now.document, document);
});

test('nothing to rehearse without an index', () => {
  assert.deepEqual(rehearsalEdits(() => undefined), []);
});

/** A service as the proxy starts it in Kubernetes: the start-up document checked and compiled without the reload memos. */
function started(configMap: DataLookup, secret: DataLookup, memo: AssemblyMemo): ConfigService {
  const first = assemble(configMap, secret, memo);
  assert.ok(first.state === 'complete');
  const loaded = checkConfig(first.document, 'start-up', first.env);
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(loaded.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: loaded.raw });
  service.setOrigin({ managedBy: 'kubernetes', editWith: 'kubectl', sources: first.index.sources });
  return service;
}

const answers = (s: ConfigService) => ({ hash: s.current().hash, document: s.document(), revision: s.revision(), status: s.status(), owner: s.ownerOf('virtual_keys', 'vk-3'), origin: s.origin() });

test('a service that rehearsed reloads serves, answers and reloads an edit exactly as one that did not', async () => {
  const { configMap, secret } = render(document);
  const plainMemo = new AssemblyMemo();
  const plain = started(configMap, secret, plainMemo);
  const warmMemo = new AssemblyMemo();
  const warm = started(configMap, secret, warmMemo);
  const served = warm.current();
  // The steps KubeConfigSource rehearses.
  for (const step of [configMap, ...rehearsalEdits(configMap), configMap]) {
    const a = assemble(step, secret, warmMemo);
    assert.ok(a.state === 'complete');
    await warm.rehearse(a.document, a.env);
  }
  assert.equal(warm.current(), served, 'the served snapshot is not swapped');
  assert.deepEqual(answers(warm), answers(plain));

  // A real edit right after: the rehearsed resource's own description again, and a key disabled.
  const edited = documentWith(Array.from({ length: KEYS }, (_, i) => (i === 0 ? { ...vk(0, '.key 0'), is_active: false } : vk(i))));
  const next = render(edited);
  const origin = { managedBy: 'kubernetes' as const, editWith: 'kubectl', sources };
  for (const [service, memo] of [[plain, plainMemo], [warm, warmMemo]] as const) {
    const a = assemble(next.configMap, next.secret, memo);
    assert.ok(a.state === 'complete');
    assert.deepEqual(a.document, edited);
    await service.replace(a.document, { source: 'edit', env: a.env, origin });
  }
  // And as a reload with nothing kept from before serves it.
  const empty = checkConfig({}, 'empty');
  const fresh = new ConfigService(new SnapshotHolder(compileSnapshot(empty.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: empty.raw });
  await fresh.replace(edited, { source: 'edit', env: secrets, origin });
  assert.equal(warm.current().hash, fresh.current().hash, 'the edit is served as a reload with nothing kept serves it');
  assert.deepEqual(answers(warm), answers(plain));
  assert.equal(warm.document().governance?.virtual_keys?.[0].is_active, false);
  assert.equal([...warm.current().governance.virtualKeys.values()].find((k) => k.record.id === 'vk-0')?.record.is_active, false, 'the snapshot serves the key disabled');
});
