// The cache's request identity parts that need no server: the canonical JSON behind the direct
// hash, durations (ttl and x-bf-cache-ttl) and the per-request headers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalHash, canonicalJson, canonicalPair } from '../../proxy/src/cache/canonical.ts';
import { parseDurationMs } from '../../proxy/src/cache/duration.ts';
import { readCacheHeaders } from '../../proxy/src/cache/headers.ts';

const parsed = (text: string) => JSON.parse(text) as unknown;

test('key order and whitespace do not change the hash', () => {
  const a = parsed('{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.2}');
  const b = parsed('{\n  "temperature": 0.2,\n  "messages": [ { "content": "hi", "role": "user" } ],\n  "model": "m"\n}');
  assert.equal(canonicalHash(a), canonicalHash(b));
  assert.equal(canonicalJson(b), '{"messages":[{"content":"hi","role":"user"}],"model":"m","temperature":0.2}');
});

test('number formats do not change the hash: 1.0 / 1, 1e2 / 100, -0 / 0', () => {
  assert.equal(canonicalHash(parsed('{"t":1.0}')), canonicalHash(parsed('{"t":1}')));
  assert.equal(canonicalHash(parsed('{"n":1e2}')), canonicalHash(parsed('{"n":100}')));
  assert.equal(canonicalHash(parsed('{"n":-0}')), canonicalHash(parsed('{"n":0}')));
  assert.equal(canonicalHash(parsed('{"n":0.50}')), canonicalHash(parsed('{"n":5e-1}')));
});

test('what is asked still matters: values, array order, nesting', () => {
  assert.notEqual(canonicalHash({ t: 1 }), canonicalHash({ t: 2 }));
  assert.notEqual(canonicalHash({ a: [1, 2] }), canonicalHash({ a: [2, 1] }));
  assert.notEqual(canonicalHash({ a: { b: 1 } }), canonicalHash({ a: '{"b":1}' }));
  assert.notEqual(canonicalHash({ s: true }), canonicalHash({ s: 'true' }));
});

test('members are in code-unit order, as sort() puts them, in small and large objects alike', () => {
  const keys = ['b', 'a', '10', '9', 'Z', 'é', 'aa', '_', ...Array.from({ length: 20 }, (_, i) => `k${(i * 7) % 20}`)];
  for (const n of [3, 8, keys.length]) {
    const obj = Object.fromEntries(keys.slice(0, n).map((k, i) => [k, i]));
    const expected = `{${Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${obj[k]}`).join(',')}}`;
    assert.equal(canonicalJson(obj), expected);
    assert.equal(canonicalJson({ ...obj, skipped: 1 }, { skip: new Set(['skipped']), stream: true }), canonicalJson({ ...obj, stream: true }));
  }
});

test('undefined members are left out as JSON leaves them out; bytes are hashed, not copied', () => {
  assert.equal(canonicalJson({ a: 1, b: undefined }), '{"a":1}');
  const file = canonicalJson({ file: new Uint8Array([1, 2, 3]) });
  assert.match(file, /^\{"file":"sha256:[0-9a-f]{64}"\}$/);
  assert.notEqual(canonicalHash({ file: new Uint8Array([1, 2, 3]) }), canonicalHash({ file: new Uint8Array([1, 2, 4]) }));
});

test('a top-level view writes the same bytes as the copy it stands for (stored hashes keep matching)', () => {
  const body = parsed('{"model":"openai/gpt-4o","fallbacks":["b/c"],"messages":[{"role":"user","content":"hi"}],"temperature":0.2,"stream":false,"n":1,"z":{"y":2,"x":[1,{"b":1,"a":2}]}}') as Record<string, unknown>;
  for (const skip of [['model', 'fallbacks'], ['model', 'fallbacks', 'messages', 'prompt', 'input', 'instructions', 'file', 'system']]) {
    for (const stream of [true, false]) {
      const copy: Record<string, unknown> = { ...body };
      for (const k of skip) delete copy[k];
      copy.stream = stream;
      assert.equal(canonicalJson(body, { skip: new Set(skip), stream }), canonicalJson(copy));
    }
  }
  // No stream member sent: the view still writes it, as the copy had it set.
  assert.equal(canonicalJson({ b: 1, a: undefined }, { skip: new Set(), stream: false }), '{"b":1,"stream":false}');
});

test('two views written in one walk are the bytes each view writes alone', () => {
  const params = new Set(['model', 'fallbacks', 'messages', 'prompt', 'input', 'instructions', 'file', 'system']);
  const whole = new Set(['model', 'fallbacks']);
  const bodies = [
    '{"model":"openai/gpt-4o","fallbacks":["b/c"],"messages":[{"role":"user","content":"hi"}],"temperature":0.2,"stream":true,"n":1,"z":{"y":2,"x":[1,{"b":1,"a":2}]}}',
    '{"messages":[{"role":"user","content":"q\\"uote \\u00e9"}],"model":"m"}',
    '{"zz":1,"aa":null,"stream":false,"instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":"x"}]}]}',
    '{}',
  ];
  for (const text of bodies) {
    const body = parsed(text) as Record<string, unknown>;
    for (const [s1, s2] of [[true, true], [false, false], [true, false]]) {
      const a = { skip: params, stream: s1 };
      const b = { skip: whole, stream: s2 };
      assert.deepEqual(canonicalPair(body, a, b), [canonicalJson(body, a), canonicalJson(body, b)]);
    }
  }
  assert.deepEqual(canonicalPair({ b: 1, a: { d: 1, c: [2, undefined] } }, { skip: new Set(['a']), stream: false }, { skip: new Set(['b']), stream: true }), [
    '{"b":1,"stream":false}',
    '{"a":{"c":[2,null],"d":1},"stream":true}',
  ]);
});

test('durations: Go forms and integer seconds; anything else is invalid', () => {
  assert.equal(parseDurationMs('30s'), 30_000);
  assert.equal(parseDurationMs('5m'), 300_000);
  assert.equal(parseDurationMs('1h30m'), 5_400_000);
  assert.equal(parseDurationMs('250ms'), 250);
  assert.equal(parseDurationMs('1.5h'), 5_400_000);
  assert.equal(parseDurationMs('120'), 120_000);
  assert.equal(parseDurationMs(60), 60_000);
  for (const bad of ['', 'soon', '-5s', '5 minutes', '5d', '1h30', 1.5, -1, null]) assert.equal(parseDurationMs(bad), undefined, String(bad));
});

test('cache headers: the key, ttl, a clamped threshold, the type and no-store; invalid values are ignored', () => {
  const h = readCacheHeaders({ 'x-bf-cache-key': 'k', 'x-bf-cache-ttl': '10s', 'x-bf-cache-threshold': '0.93', 'x-bf-cache-type': 'Semantic', 'x-bf-cache-no-store': 'TRUE' });
  assert.deepEqual(h, { key: 'k', ttlMs: 10_000, threshold: 0.93, type: 'semantic', noStore: true });
  assert.equal(readCacheHeaders({ 'x-bf-cache-threshold': '7' }).threshold, 1);
  assert.equal(readCacheHeaders({ 'x-bf-cache-threshold': '-2' }).threshold, 0);
  const bad = readCacheHeaders({ 'x-bf-cache-key': '', 'x-bf-cache-ttl': 'later', 'x-bf-cache-threshold': 'high', 'x-bf-cache-type': 'fuzzy', 'x-bf-cache-no-store': 'yes' });
  assert.deepEqual(bad, { key: undefined, ttlMs: undefined, threshold: undefined, type: undefined, noStore: false });
  // A lifetime above the 7-day maximum is refused naming the header; the maximum itself is kept.
  assert.equal(readCacheHeaders({ 'x-bf-cache-ttl': '168h' }).ttlMs, 604_800_000);
  assert.throws(() => readCacheHeaders({ 'x-bf-cache-ttl': '604801' }), (e: { status: number; param: string }) => e.status === 400 && e.param === 'x-bf-cache-ttl');
});
