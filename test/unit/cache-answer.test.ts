// What the cache stores of an answer and how it serves it again: JSON text with cache_debug spliced
// into extra_fields, streams in their own framing with cache_debug only on the final chunk, and
// chunks the client never saw left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { debugMiss, directDebug, readyAnswer, replay, serveDirect, serveReady, storedAnswer } from '../../proxy/src/cache/answer.ts';
import type { Outcome, StreamFormat } from '../../proxy/src/pipeline/outcome.ts';

const hit = { cache_hit: true, cache_id: 'c1', hit_type: 'direct' };

test('a JSON answer is stored without the miss cache_debug and served with the hit one', () => {
  const sent = '{"id":"x","choices":[],"extra_fields":{"provider":"openai"}}';
  const outcome: Outcome = { kind: 'text', status: 200, text: sent };
  const original = debugMiss(outcome, { cache_hit: false, cache_id: 'c1' });
  assert.equal(JSON.parse((outcome as { text: string }).text).extra_fields.cache_debug.cache_hit, false, 'the miss says so');
  const stored = storedAnswer(outcome, undefined, false, 'openai', 'gpt-4o', original)!;
  assert.equal((stored as { text: string }).text, sent);
  const served = replay(stored, hit) as { kind: string; text: string };
  assert.equal(served.kind, 'text');
  assert.deepEqual(JSON.parse(served.text), { id: 'x', choices: [], extra_fields: { provider: 'openai', cache_debug: hit } });
  // A value answer: the miss's cache_debug is left out of what is stored.
  const value: Outcome = { kind: 'json', status: 200, value: { a: 1, extra_fields: { provider: 'p', cache_debug: { cache_hit: false } } } };
  assert.equal((storedAnswer(value, undefined, false, 'p', 'm') as { text: string }).text, '{"a":1,"extra_fields":{"provider":"p"}}');
});

test('an answer without extra_fields (a native format) is served as it was stored', () => {
  const stored = storedAnswer({ kind: 'text', status: 200, text: '{"type":"message","content":[]}' }, undefined, false, 'anthropic', 'claude')!;
  assert.equal((replay(stored, hit) as { text: string }).text, '{"type":"message","content":[]}');
});

test('a stream is stored as the events the client saw and replayed one by one, cache_debug on the final chunk only', async () => {
  type Item = { n: number; hidden?: boolean; extra_fields?: Record<string, unknown> };
  const format = {
    encode: (i: Item) => `data: ${JSON.stringify(i)}\n\n`,
    done: 'data: [DONE]\n\n',
    errorEvent: () => '',
    visible: (i: Item) => !i.hidden,
  };
  const items: Item[] = [{ n: 1, extra_fields: {} }, { n: 2, extra_fields: {} }, { n: 3, hidden: true }];
  const outcome: Outcome = { kind: 'stream', items: (async function* () {})(), format: format as unknown as StreamFormat<unknown> };
  const stored = storedAnswer(outcome, items, false, 'openai', 'gpt-4o')!;
  const served = replay(stored, hit) as Extract<Outcome, { kind: 'stream' }>;
  const out: string[] = [];
  for await (const batch of served.items) {
    assert.equal(batch.length, 1, 'one event at a time');
    out.push(served.format.encode(batch[0]));
  }
  assert.equal(out.length, 2, 'the hidden item is not replayed');
  assert.deepEqual(JSON.parse(out[0].slice(6)), { n: 1, extra_fields: {} });
  assert.deepEqual(JSON.parse(out[1].slice(6)), { n: 2, extra_fields: { cache_debug: hit } });
  assert.equal(served.format.done, 'data: [DONE]\n\n');
});

test('an entry read once is served again with each hit its own cache_debug, as replay serves it', () => {
  const sent = '{"id":"x","choices":[],"extra_fields":{"provider":"openai"}}';
  const stored = storedAnswer({ kind: 'text', status: 200, text: sent, headers: { 'x-a': '1' } }, undefined, false, 'openai', 'gpt-4o')!;
  const ready = readyAnswer(JSON.stringify(stored))!;
  for (const id of ['c1', 'c2']) {
    const debug = { ...hit, cache_id: id };
    assert.deepEqual(serveReady(ready, debug), replay(stored, debug));
    assert.deepEqual(JSON.parse((serveReady(ready, debug) as { text: string }).text).extra_fields.cache_debug, debug);
  }
  // A direct hit's text is made once per entry: the same as serveReady's, its own id each.
  for (const id of ['c1', 'c1', 'c2', 'c1']) {
    const debug = directDebug(id);
    assert.deepEqual(serveDirect(ready, debug), serveReady(ready, debug));
  }
  // Empty extra_fields, and one without a place for cache_debug (served as stored).
  const empty = readyAnswer(JSON.stringify({ ...stored, text: '{"a":1,"extra_fields":{}}' }))!;
  assert.equal((serveReady(empty, hit) as { text: string }).text, `{"a":1,"extra_fields":{"cache_debug":${JSON.stringify(hit)}}}`);
  const native = readyAnswer(JSON.stringify({ ...stored, text: '{"type":"message"}' }))!;
  assert.equal((serveReady(native, hit) as { text: string }).text, '{"type":"message"}');
  assert.equal(readyAnswer('not json'), undefined);
});
