import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkQueue, backoffDelay } from '../../operator/src/queue.ts';

test('an item added many times is queued once', async () => {
  const depths: number[] = [];
  const q = new WorkQueue<string>({ onDepth: (d) => depths.push(d) });
  q.add('ns-a');
  q.add('ns-a');
  q.add('ns-b');
  q.add('ns-a');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'ns-a');
  assert.equal(await q.get(), 'ns-b');
  assert.equal(q.length, 0);
  assert.deepEqual(depths, [1, 2, 1, 0]);
});

test('an item is never handed out twice at once: added while processing, it comes back after done', async () => {
  const q = new WorkQueue<string>();
  q.add('x');
  const item = await q.get();
  q.add('x');
  q.add('x');
  assert.equal(q.length, 0, 'not queued while being processed');
  let second: string | undefined;
  void q.get().then((i) => (second = i));
  await sleep(5);
  assert.equal(second, undefined);
  q.done(item as string);
  await sleep(0);
  assert.equal(second, 'x', 'queued again, once');
  q.done('x');
  assert.equal(q.length, 0);
});

test('a waiting worker gets an item as soon as it is added', async () => {
  const q = new WorkQueue<number>();
  const got = q.get();
  q.add(7);
  assert.equal(await got, 7);
});

test('per-item exponential backoff, capped; forget starts it over', async () => {
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => backoffDelay(n, { baseMs: 100, maxMs: 1000 })), [100, 200, 400, 800, 1000]);
  const q = new WorkQueue<string>({ backoff: { baseMs: 20, maxMs: 200 } });
  assert.equal(q.addRateLimited('a'), 20);
  assert.equal(q.addRateLimited('a'), 40);
  assert.equal(q.addRateLimited('b'), 20, 'each item has its own count');
  assert.equal(q.failures('a'), 2);
  q.forget('a');
  assert.equal(q.failures('a'), 0);
  assert.equal(q.addRateLimited('a'), 20);
  const started = Date.now();
  assert.equal(await q.get(), 'a');
  q.done('a');
  assert.equal(await q.get(), 'b');
  assert.ok(Date.now() - started >= 15);
  q.shutDown();
});

test('addAfter keeps the earliest due time and dedupes with add', async () => {
  const q = new WorkQueue<string>();
  q.addAfter('a', 200);
  q.addAfter('a', 10);
  q.addAfter('a', 500);
  // Against a 150 ms timer of this test rather than the clock: timers fire in the order they are
  // due however late a loaded machine runs them, so only the 10 ms one comes first.
  assert.equal(await Promise.race([q.get(), sleep(150).then(() => 'a later timer')]), 'a', 'the earliest timer won');
  q.done('a');
  await sleep(30);
  assert.equal(q.length, 0, 'the later timers were dropped');
  q.shutDown();
});

test('shutDown releases waiting workers and drops pending retries', async () => {
  const q = new WorkQueue<string>();
  const waiting = q.get();
  q.addAfter('later', 50);
  q.shutDown();
  assert.equal(await waiting, undefined);
  q.add('x');
  assert.equal(await q.get(), undefined);
});
