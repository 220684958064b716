// The log writer in front of a real SQLite store: enqueue never waits, records are written in batches
// and visible shortly after, a full queue drops and counts instead of blocking, a failed write is
// counted and does not stop later ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../proxy/src/logs/sqlite-store.ts';
import type { LogStore } from '../../proxy/src/logs/store.ts';
import type { LogRecord } from '../../proxy/src/logs/record.ts';
import { LogWriter } from '../../proxy/src/logs/writer.ts';
import { startRetentionSweeper } from '../../proxy/src/logs/retention.ts';
import { patience } from '../helpers/patience.ts';

const PAGE = { limit: 1000, offset: 0, sort_by: 'timestamp', order: 'desc' } as const;
const rec = (i: number, timestamp = Date.now()): LogRecord => ({ id: `req-${i}`, timestamp, object: 'chat.completion', status: 'success', provider: 'openai' });
const count = async (s: LogStore): Promise<number> => (await s.search({}, PAGE)).total_count;

/** The real store, with insert calls counted and (optionally) held until released. */
function observed(store: LogStore): { store: LogStore; batches: number[]; hold(): void; release(): void } {
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const batches: number[] = [];
  const wrapped = Object.create(store) as LogStore;
  wrapped.insert = async (records) => {
    batches.push(records.length);
    if (gate) await gate;
    return store.insert(records);
  };
  return {
    store: wrapped,
    batches,
    hold: () => (gate = new Promise((r) => (open = r))),
    release: () => {
      gate = undefined;
      open?.();
    },
  };
}

test('records are written in batches and visible within the flush interval, enqueue returns at once', async () => {
  const store = await openSqliteStore(':memory:');
  const o = observed(store);
  const w = new LogWriter(o.store, { batchSize: 100, flushIntervalMs: 50 });
  const t = performance.now();
  for (let i = 0; i < 1000; i++) assert.equal(w.enqueue(rec(i)), true);
  assert.ok(performance.now() - t < patience(200), 'enqueue does not wait for the store');
  w.enqueue(rec(1000));
  const deadline = Date.now() + patience(2000);
  while ((await count(store)) < 1001 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await count(store), 1001);
  assert.ok(o.batches.length <= 12, `1001 records in ${o.batches.length} inserts`);
  assert.ok(Math.max(...o.batches) <= 100);
  assert.equal(w.dropped, 0);
  assert.equal(w.written, 1001);
  await w.close();
  await store.close();
});

test('a full queue drops new records and counts them; nothing blocks; the queue drains after', async () => {
  const store = await openSqliteStore(':memory:');
  const o = observed(store);
  const drops: number[] = [];
  const w = new LogWriter(o.store, { maxQueue: 10, batchSize: 5, flushIntervalMs: 1, onDrop: (n) => drops.push(n) });
  o.hold();
  w.enqueue(rec(0));
  await new Promise((r) => setTimeout(r, 20)); // the first batch is now stuck in the store
  let accepted = 1;
  for (let i = 1; i < 30; i++) if (w.enqueue(rec(i))) accepted++;
  assert.equal(accepted, 11, 'one in flight + a queue of 10');
  assert.equal(w.dropped, 19);
  assert.equal(drops.reduce((a, b) => a + b, 0), 19, 'the metric hook saw every drop');
  o.release();
  await w.flush();
  assert.equal(await count(store), 11);
  await w.close();
  assert.equal(w.enqueue(rec(99)), false, 'a closed writer refuses');
  assert.equal(w.dropped, 20);
  await store.close();
});

test('a failed write is counted as dropped and later records are still written', async () => {
  const store = await openSqliteStore(':memory:');
  const failing = Object.create(store) as LogStore;
  let fail = true;
  failing.insert = (records) => (fail ? Promise.reject(new Error('disk full')) : store.insert(records));
  const w = new LogWriter(failing, { flushIntervalMs: 1 });
  w.enqueue(rec(1));
  w.enqueue(rec(2));
  await w.flush();
  assert.equal(w.dropped, 2);
  fail = false;
  w.enqueue(rec(3));
  await w.flush();
  assert.equal(await count(store), 1);
  await w.close();
  await store.close();
});

test('the retention sweeper deletes what is older than the retention days, in the background', async () => {
  const store = await openSqliteStore(':memory:');
  const now = Date.UTC(2026, 5, 1);
  const day = 86_400_000;
  await store.insert([rec(1, now - 40 * day), rec(2, now - 31 * day), rec(3, now - 29 * day), rec(4, now)]);
  const s = startRetentionSweeper(store, 30, { now: () => now, firstDelayMs: 1, intervalMs: 3600_000 });
  const deadline = Date.now() + patience(2000);
  while ((await count(store)) > 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual((await store.search({}, PAGE)).logs.map((l) => l.id), ['req-4', 'req-3']);
  assert.equal(await s.sweep(), 0);
  s.stop();
  await store.close();
});

test('a retention read at each sweep follows a change of the setting without a restart', async () => {
  const store = await openSqliteStore(':memory:');
  const now = Date.UTC(2026, 5, 1);
  const day = 86_400_000;
  await store.insert([rec(1, now - 40 * day), rec(2, now - 20 * day), rec(3, now)]);
  let days = 30;
  const s = startRetentionSweeper(store, () => days, { now: () => now, firstDelayMs: 3600_000, intervalMs: 3600_000 });
  assert.equal(await s.sweep(), 1);
  // Changed through PUT /api/config: the next sweep reads it.
  days = 10;
  assert.equal(await s.sweep(), 1);
  assert.deepEqual((await store.search({}, PAGE)).logs.map((l) => l.id), ['req-3']);
  s.stop();
  await store.close();
});

test('writing to SQLite does not stall the event loop (the connection lives in a worker thread)', async () => {
  const store = await openSqliteStore(':memory:');
  const w = new LogWriter(store, { batchSize: 2000, maxQueue: 20_000, flushIntervalMs: 1 });
  for (let i = 0; i < 20_000; i++) w.enqueue({ ...rec(i), model: `m${i % 7}`, input_content: 'x'.repeat(200), routing_rule_ids: ['r1'] });
  // Ticks every 5 ms while ten 2 000-record transactions run; the longest gap is what a request would wait.
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  await w.flush();
  clearInterval(tick);
  worst = Math.max(worst, performance.now() - last);
  assert.equal(await count(store), 20_000);
  // On the main thread these inserts stall it for ~450 ms; from the worker only hand-over costs remain.
  // A loaded machine delays every timer tick too (this bound failed at load 10-12 on 2 cores), so the
  // bound scales with the load, as both figures do.
  const bound = patience(150);
  assert.ok(worst < bound, `the event loop stalled for ${worst.toFixed(1)} ms (bound ${bound} ms)`);
  await w.close();
  await store.close();
});

test('while the store does not answer, records wait in the queue instead of failing a batch at a time; a flush still ends', async () => {
  const store = await openSqliteStore(':memory:');
  let silent: string | undefined = 'logs store (PostgreSQL db:5432) has not answered since …';
  let inserts = 0;
  const wrapped = Object.create(store) as LogStore;
  wrapped.insert = (records) => {
    inserts++;
    return store.insert(records);
  };
  wrapped.unavailable = () => silent;
  const w = new LogWriter(wrapped, { flushIntervalMs: 10 });
  for (let i = 0; i < 5; i++) w.enqueue(rec(i));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(inserts, 0, 'no batch is sent to a store that does not answer');
  assert.equal(w.pending, 5);
  assert.equal(w.dropped, 0);
  silent = undefined;
  const deadline = Date.now() + patience(5000);
  while (w.written < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal(w.written, 5, 'written once it answers again');
  assert.equal(await count(store), 5);
  // A flush (shutdown) does not wait for a silent store: it writes, or drops, at once.
  silent = 'still silent';
  w.enqueue(rec(99));
  await w.close();
  assert.equal(w.pending, 0);
  await store.close();
});
