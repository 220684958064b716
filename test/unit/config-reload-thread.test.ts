// A reload reads, parses and schema-checks config.json in a thread of its own (config/read-worker.ts)
// and the config store's file is written in steps (config/pretty-json.ts). Neither may change what a
// user sees: a broken file is refused with the same errors the start-up check gives, and the store's
// file is the same text JSON.stringify makes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile, readConfigForReload } from '../../proxy/src/config/load.ts';
import { checkVettedSteps, ConfigError } from '../../proxy/src/config/check.ts';
import { runNow } from '../../proxy/src/config/steps.ts';
import { seedDigest } from '../../proxy/src/config/seed-digest.ts';
import { prettyJsonChunkSteps } from '../../proxy/src/config/pretty-json.ts';
import { jsonDigestSteps } from '../../proxy/src/config/json-digest.ts';
import { documentFromSlices, sliceDocument } from '../../proxy/src/config/document-slices.ts';
import { objectKey, objectKeysSteps, objectsOf } from '../../proxy/src/config/ownership.ts';
import type { GatewayConfig } from '../../proxy/src/schema/gateway.ts';

const dir = mkdtempSync(join(tmpdir(), 'skybridge-reload-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const good = {
  providers: { openai: { keys: [{ name: 'k', value: 'sk-up', weight: 1 }] } },
  governance: { virtual_keys: [{ id: 'vk-1', name: 'one', value: 'sk-bf-one', provider_configs: [{ provider: 'openai', weight: 1 }] }] },
};

/** The errors a reload reports for `text`, and the ones the start-up check reports. */
async function bothWays(name: string, text: string): Promise<{ reload: string; startup: string }> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const message = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      return err.message;
    }
    assert.fail('no error');
  };
  let reload: string;
  try {
    const read = await readConfigForReload(file, process.env, 0);
    assert.ok(read.problems, 'the reader thread ran');
    reload = message(() => runNow(checkVettedSteps(read.raw, read.problems!, file)));
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    reload = err.message;
  }
  return { reload, startup: message(() => loadConfigFile(file)) };
}

test('a reload refuses a broken config.json with the errors of the start-up check, each naming its field', async () => {
  const cases: [string, string, RegExp][] = [
    ['schema.json', JSON.stringify({ ...good, governance: { virtual_keys: [{ id: 'vk-1', name: 'one', value: 'sk-bf-one', bogus: 1 }] } }), /governance\.virtual_keys\[0\]\.bogus: unknown field/],
    ['type.json', JSON.stringify({ ...good, client: { max_request_body_size_mb: 'big' } }), /client\.max_request_body_size_mb: must be/],
    ['proto.json', '{"providers": {"openai": {"__proto__": {"x": 1}}}}', /providers\.openai\.__proto__: '__proto__' is not allowed/],
    ['broken.json', '{"providers": ', /\(root\): not valid JSON/],
    ['rules.json', JSON.stringify({ ...good, governance: { virtual_keys: [good.governance.virtual_keys[0], good.governance.virtual_keys[0]] } }), /virtual_keys/],
  ];
  for (const [name, text, expected] of cases) {
    const { reload, startup } = await bothWays(name, text);
    assert.match(reload, expected, name);
    assert.equal(reload, startup, name);
  }
  await assert.rejects(readConfigForReload(join(dir, 'missing.json'), process.env, 0), (err: Error) => err instanceof ConfigError && /\(file\): ENOENT/.test(err.message));
});

test('a valid config.json read in the thread gives the document and digest the start-up path gives', async () => {
  const file = join(dir, 'good.json');
  writeFileSync(file, JSON.stringify(good, null, 2));
  const read = await readConfigForReload(file, process.env, 0);
  assert.deepEqual(read.problems, []);
  const startup = loadConfigFile(file);
  assert.deepEqual(read.raw, startup.raw);
  assert.equal(read.digest, seedDigest(startup.raw));
  assert.deepEqual(runNow(checkVettedSteps(read.raw, read.problems!, file)).config, startup.config);
});

test('the config store text made in steps is JSON.stringify(value, null, 2), byte for byte', () => {
  const keys = Array.from({ length: 4500 }, (_, i) => ({ id: `vk-${i}`, value: `sk-${i}`, note: i % 7 ? undefined : 'line\nbreak "quoted" é', tags: i % 3 ? [] : [{}, null, [1, [2, { a: [] }]]] }));
  const samples: unknown[] = [
    { seed: 'abc', revision: 3, document: { providers: {}, governance: { virtual_keys: keys, budgets: [] }, empty: {}, nested: { a: { b: { c: { d: [1, 2] } } } } }, objects: [], gone: undefined },
    [undefined, () => 1, 'x'],
    {},
    [],
    'text',
    42,
    null,
  ];
  for (const v of samples) {
    const steps = prettyJsonChunkSteps(v, 1000);
    let yields = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) yields++;
    // Written as chunks, never one string: the same text once joined.
    assert.equal(r.value.join(''), JSON.stringify(v, null, 2));
    if (v === samples[0]) {
      assert.ok(yields >= 2, `4,500 keys are written in more than one step (${yields} yields)`);
      assert.ok(r.value.length > 100 && r.value.every((c) => c.length < 2000), 'chunks of about the size asked for');
    }
  }
});

test("the snapshot's digest made in steps is SHA-256 of JSON.stringify, whatever the document holds", () => {
  const keys = Array.from({ length: 1200 }, (_, i) => ({ id: `vk-${i}`, value: `sk-${i}`, note: i % 7 ? undefined : 'line\nbreak "quoted" é \ud83d\ude00 \ud800', tags: i % 3 ? [] : [{}, null, [1, [2, { a: [] }]]] }));
  const samples: unknown[] = [
    { providers: {}, governance: { virtual_keys: keys, budgets: [] }, gone: undefined, f: () => 1, when: new Date(0), list: [undefined, () => 1, 'x', -0, 1e21], nested: { a: { b: { c: [1] } } } },
    { a: { toJSON: () => undefined }, b: { toJSON: () => ({ c: 1 }) } },
    {},
    [],
    [undefined, null],
  ];
  for (const v of samples) {
    const steps = jsonDigestSteps(v);
    let yields = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) yields++;
    assert.equal(r.value, createHash('sha256').update(JSON.stringify(v)).digest('hex'));
    if (v === samples[0]) assert.ok(yields >= 2, `1,200 keys are hashed in more than one step (${yields} yields)`);
  }
});

test('the document handed over in slices parses to what JSON.parse of the file gives', async () => {
  const keys = Array.from({ length: 1100 }, (_, i) => ({ id: `vk-${i}`, name: `key ${i}`, value: `sk-bf-key-${String(i).padStart(6, '0')}`, provider_configs: [{ provider: 'openai', weight: 1 }] }));
  const texts = [
    JSON.stringify({ ...good, governance: { virtual_keys: keys, budgets: [] } }, null, 2),
    // A negative zero (JSON.stringify writes 0), a `__proto__` key (never walked into), lists at several depths, documents that are not objects.
    JSON.stringify({ top: Array.from({ length: 600 }, (_, i) => i), a: { b: { c: Array.from({ length: 600 }, (_, i) => [i]) }, d: Array.from({ length: 300 }, () => ({})) } }).replace('"top":[0,', '"top":[-0,').replace('"a":{', '"a":{"__proto__":{"x":[1]},'),
    JSON.stringify({ top: Array.from({ length: 600 }, (_, i) => i), a: { b: { c: Array.from({ length: 600 }, (_, i) => [i]) }, d: Array.from({ length: 300 }, () => ({})) } }).replace('"a":{', '"a":{"__proto__":{"x":[1]},'),
    JSON.stringify({ a: { list: Array.from({ length: 700 }, (_, i) => ({ n: i, z: i === 650 ? '-0' : 1 })) } }).replace('"z":"-0"', '"z":-0.0'),
    '[1, 2, 3]',
    'null',
  ];
  for (const [i, text] of texts.entries()) {
    const expected = JSON.parse(text) as unknown;
    const parts = sliceDocument(expected, text);
    const back = runNow(documentFromSlices(parts));
    assert.deepStrictEqual(back, expected, `document ${i}`);
    assert.equal(JSON.stringify(back), JSON.stringify(expected), `document ${i}: key order`);
    // The first is sliced (its 1,100 keys in five slices); those holding a negative zero are handed over whole.
    if (i === 0) assert.deepEqual(parts.lists.map((l) => [l.path.join('.'), l.slices.length]), [['governance.virtual_keys', 5]]);
    if (i === 1 || i === 3) assert.deepEqual(parts, { outline: text, lists: [] });
    if (i === 2) assert.deepEqual(parts.lists.map((l) => l.path.join('.')), ['top', 'a.b.c', 'a.d']);
  }
  const file = join(dir, 'large.json');
  writeFileSync(file, texts[0]);
  const read = await readConfigForReload(file, process.env, 0);
  assert.deepEqual(read.problems, []);
  assert.deepStrictEqual(read.raw, loadConfigFile(file).raw);
});

test("a reload's seed keys, listed in steps, are the objects the ownership rules see", () => {
  const doc = {
    providers: { openai: { keys: [] }, anthropic: { keys: [] } },
    client: { drop_excess_requests: true },
    governance: {
      virtual_keys: Array.from({ length: 600 }, (_, i) => ({ id: `vk-${i}`, name: `k${i}`, value: `sk-bf-${i}` })),
      budgets: [{ id: 'b-1' }, null, 'x', [{ id: 'in-a-list' }]],
      routing_rules: [{ name: 'Rule One' }],
    },
    webhooks: [{ name: 'hook' }],
    mcp: { client_configs: [{ client_id: 'c1', name: 'one' }, { name: 'two' }] },
  } as unknown as GatewayConfig;
  const steps = objectKeysSteps(doc);
  let yields = 0;
  let r = steps.next();
  for (; !r.done; r = steps.next()) yields++;
  assert.deepEqual([...r.value], objectsOf(doc).map(objectKey));
  assert.ok(yields >= 2, `600 keys are listed in more than one step (${yields} yields)`);
});
