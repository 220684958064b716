// A change to one resource checks, resolves and compiles that resource alone (CheckMemo, CompileMemo),
// with the same result as checking the whole document, and a bad change is refused with the same
// errors while the served snapshot stays as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CheckMemo, checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { CompileMemo, compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/holder.ts';
import { ConfigService, type ConfigOrigin } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';

const PROVIDERS = 5;
const KEYS = 200;
const RULES = 20;

/** The bench's mix: custom OpenAI providers with a key each, virtual keys spread over them, rules. */
function documentOf(): { document: Record<string, unknown>; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const providers: Record<string, unknown> = {};
  for (let i = 0; i < PROVIDERS; i++) {
    env[`P_${i}`] = `sk-provider-${i}`;
    providers[`p-${i}`] = { keys: [{ name: 'k', value: `env.P_${i}`, weight: 1 }], network_config: { base_url: 'https://api.example.com', max_retries: 1 }, custom_provider_config: { base_provider_type: 'openai' } };
  }
  const virtualKeys = Array.from({ length: KEYS }, (_, i) => {
    env[`VK_${i}`] = `sk-bf-${String(i).padStart(6, '0')}`;
    return { id: `vk-${i}`, name: `vk-${i}`, description: 'v1', value: `env.VK_${i}`, provider_configs: [{ provider: `p-${i % PROVIDERS}`, allowed_models: ['*'], key_ids: ['*'] }] };
  });
  const rules = Array.from({ length: RULES }, (_, i) => ({ id: `rule-${i}`, name: `rule-${i}`, cel_expression: `headers["x-route"] == "r${i}"`, targets: [{ provider: `p-${i % PROVIDERS}`, model: 'gpt-4o', weight: 1 }] }));
  return { document: { providers, governance: { virtual_keys: virtualKeys, routing_rules: rules } }, env };
}

type Doc = ReturnType<typeof documentOf>['document'] & { governance: { virtual_keys: Record<string, unknown>[]; routing_rules: Record<string, unknown>[] }; providers: Record<string, Record<string, unknown>> };
/** A document as a source hands it: freshly parsed, sharing no object with the last one. */
const fresh = (doc: unknown): Doc => JSON.parse(JSON.stringify(doc)) as Doc;

/** The whole check's result and the memo's must be the same document, key order included. */
function assertSameAsWhole(doc: unknown, env: Record<string, string>, memo: CheckMemo) {
  const whole = checkConfig(fresh(doc), 'whole', env);
  const reused = checkConfig(doc, 'whole', env, undefined, memo);
  assert.equal(JSON.stringify(reused.config), JSON.stringify(whole.config));
  assert.deepEqual(reused.warnings, whole.warnings);
  return reused;
}

test('a change to one virtual key checks and compiles that key alone, with the whole check’s result', () => {
  const { document, env } = documentOf();
  const memo = new CheckMemo();
  const compiled = new CompileMemo();
  const items = PROVIDERS + KEYS + RULES;

  const first = assertSameAsWhole(fresh(document), env, memo);
  assert.equal(memo.stats.checked, items, 'the first document: every object checked');
  const before = compileSnapshot(first.config, compiled);
  assert.equal(compiled.providersCompiled, PROVIDERS);
  assert.equal(compiled.governance.keysCompiled, KEYS);

  const edited = fresh(document);
  edited.governance.virtual_keys[137].description = 'v2';
  const second = assertSameAsWhole(edited, env, memo);
  assert.equal(memo.stats.checked, items + 1, 'only the edited key is checked again');
  assert.equal(memo.stats.reused, items - 1);
  assert.equal(memo.stats.whole, 0);
  const after = compileSnapshot(second.config, compiled);
  assert.equal(compiled.governance.keysCompiled, KEYS + 1, 'only the edited key is compiled again');
  assert.equal(compiled.providersCompiled, PROVIDERS, 'no provider is compiled again');
  // The snapshot is new and whole; what did not change is the very same compiled object.
  assert.notEqual(after, before);
  const runtimeOf = (s: typeof after, id: string) => [...s.governance.virtualKeys.values()].find((k) => k.record.id === id);
  assert.equal(runtimeOf(after, 'vk-137')?.record.description, 'v2');
  assert.equal(runtimeOf(before, 'vk-137')?.record.description, 'v1', 'the old snapshot is untouched');
  assert.equal(runtimeOf(after, 'vk-3'), runtimeOf(before, 'vk-3'));
  assert.equal(after.providers.get('p-1'), before.providers.get('p-1'));

  // A provider edit compiles that provider, and the keys that read it.
  const provider = fresh(edited);
  provider.providers['p-2'].network_config = { base_url: 'https://api.example.com', max_retries: 7 };
  const third = compileSnapshot(assertSameAsWhole(provider, env, memo).config, compiled);
  assert.equal(compiled.providersCompiled, PROVIDERS + 1);
  assert.equal(compiled.governance.keysCompiled, KEYS + 1 + KEYS / PROVIDERS);
  assert.equal(third.providers.get('p-2')?.maxRetries, 7);
});

test('a rotated Secret value resolves the objects that read it again', () => {
  const { document, env } = documentOf();
  const memo = new CheckMemo();
  checkConfig(fresh(document), 'k8s', env, undefined, memo);
  const checked = memo.stats.checked;
  const rotated = { ...env, VK_5: 'sk-bf-rotated' };
  const out = assertSameAsWhole(fresh(document), rotated, memo);
  assert.equal(memo.stats.checked, checked + 1);
  assert.equal(out.config.governance?.virtual_keys?.[5].value, 'sk-bf-rotated');
});

test('a bad object is refused with the errors the whole check gives, and the memo still serves the next good change', () => {
  const { document, env } = documentOf();
  const memo = new CheckMemo();
  checkConfig(fresh(document), 'k8s', env, undefined, memo);
  const errorsOf = (doc: unknown, e: Record<string, string>, m?: CheckMemo) => {
    try {
      checkConfig(doc, 'k8s', e, undefined, m);
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.message;
    }
    assert.fail('accepted');
  };

  // A schema error far down the list: named at its place in the whole document.
  const schema = fresh(document);
  schema.governance.virtual_keys[150].provider_configs = [{ provider: 'p-0', allowed_models: 'all' }];
  assert.equal(errorsOf(schema, env, memo), errorsOf(fresh(schema), env));
  assert.match(errorsOf(schema, env, memo), /governance\.virtual_keys\[150\]\.provider_configs\[0\]\.allowed_models: must be array/);
  // A rule between objects (a provider no one defines), and a reference that cannot be read.
  const reference = fresh(document);
  reference.governance.virtual_keys[42].provider_configs = [{ provider: 'nowhere' }];
  assert.equal(errorsOf(reference, env, memo), errorsOf(fresh(reference), env));
  assert.match(errorsOf(reference, env, memo), /governance\.virtual_keys\[42\]\.provider_configs\[0\]\.provider: provider 'nowhere' is not configured/);
  const { VK_9: _gone, ...unset } = env;
  assert.equal(errorsOf(fresh(document), unset, memo), errorsOf(fresh(document), unset));

  // Afterwards a good change still costs one object.
  const checked = memo.stats.checked;
  const good = fresh(document);
  good.governance.routing_rules[3].description = 'v2';
  assertSameAsWhole(good, env, memo);
  assert.ok(memo.stats.checked <= checked + 2, `checked ${memo.stats.checked - checked}`);
});

test('the Kubernetes reload (replace) refuses a bad change without touching the served snapshot, then applies the next one incrementally', async () => {
  const { document, env } = documentOf();
  const origin: ConfigOrigin = { managedBy: 'kubernetes', editWith: 'the custom resources', sources: {} };
  const empty = checkConfig({}, 'empty');
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(empty.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: empty.raw });
  service.setOrigin(origin);
  const served = await service.replace(fresh(document), { source: 'k8s', env, origin });
  const start = service.reloadStats();

  const bad = fresh(document);
  bad.governance.virtual_keys[10].provider_configs = [{ provider: 'p-0', weight: 'heavy' }];
  await assert.rejects(service.replace(bad, { source: 'k8s', env, origin }), (err: unknown) => err instanceof ConfigError && /virtual_keys\[10\]\.provider_configs\[0\]\.weight/.test(err.message));
  assert.equal(service.current(), served, 'the served snapshot is the same object');

  const good = fresh(document);
  good.governance.virtual_keys[10].description = 'v2';
  const next = await service.replace(good, { source: 'k8s', env, origin });
  assert.equal(service.current(), next);
  const stats = service.reloadStats();
  assert.equal(stats.checked - start.checked, 1);
  assert.equal(stats.keysCompiled - start.keysCompiled, 1);
  assert.equal(stats.providersCompiled - start.providersCompiled, 0);
  assert.equal(stats.wholeChecks - start.wholeChecks, 0, 'the refused document cost no whole-document check');
});
