import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryCounterStore } from '../../proxy/src/governance/counters/memory.ts';
import type { Limit } from '../../proxy/src/governance/counters/store.ts';

const T0 = Date.parse('2025-03-10T12:00:00Z');
const requests = (max: number, duration = '1m'): Limit => ({ key: 'requests:rl', max, duration });
const tokens = (max: number): Limit => ({ key: 'tokens:rl', max, duration: '1h' });
const budget = (max: number, duration = '1d'): Limit => ({ key: 'budget:b', max, duration });

test('a request limit of N admits exactly N per window, then says when the window ends', async () => {
  const s = new MemoryCounterStore();
  const lim = [requests(3)];
  for (let i = 1; i <= 3; i++) assert.deepEqual(await s.admit(lim, T0 + i), { ok: true, usage: [i] });
  assert.deepEqual(await s.admit(lim, T0 + 10_000), { ok: false, index: 0, usage: [3], retryAfterMs: 50_000 });
  // The next minute is a new window.
  assert.deepEqual(await s.admit(lim, T0 + 60_000), { ok: true, usage: [1] });
});

test('all or nothing: a rejected admission consumes no request anywhere', async () => {
  const s = new MemoryCounterStore();
  const lim = [requests(10), { key: 'requests:other', max: 10, duration: '1h' }, budget(1)];
  assert.equal((await s.admit(lim, T0)).ok, true);
  await s.record([{ limit: budget(1), amount: 1.5 }], T0);
  const r = await s.admit(lim, T0 + 1);
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.index === 2);
  assert.deepEqual(r.usage, [1, 1, 1.5]);
  assert.deepEqual(await s.peek(lim, T0 + 2), [1, 1, 1.5], 'request counters unchanged by the rejection');
  // Which limit failed first is reported in the order given.
  const full = await s.admit([requests(1), budget(1)], T0 + 3);
  assert.ok(!full.ok && full.index === 0);
});

test('budgets and token limits are checked on admit and grow only by record', async () => {
  const s = new MemoryCounterStore();
  const lim = [budget(0.01), tokens(1000)];
  assert.deepEqual(await s.admit(lim, T0), { ok: true, usage: [0, 0] });
  assert.deepEqual(await s.admit(lim, T0), { ok: true, usage: [0, 0] }, 'admit itself adds nothing to them');
  await s.record([{ limit: lim[0], amount: 0.004 }, { limit: lim[1], amount: 400.4 }], T0);
  await s.record([{ limit: lim[0], amount: 0.004 }, { limit: lim[1], amount: 599.6 }], T0);
  const usage = await s.peek(lim, T0);
  assert.ok(Math.abs(usage[0] - 0.008) < 1e-12);
  assert.equal(usage[1], 1000, 'tokens are whole numbers');
  const r = await s.admit(lim, T0 + 1);
  assert.ok(!r.ok && r.index === 1, 'tokens reached their max');
  assert.equal(!r.ok && r.retryAfterMs, 3_600_000 - 1);
  // Non-positive and non-finite amounts change nothing.
  await s.record([{ limit: lim[0], amount: -1 }, { limit: lim[0], amount: Number.NaN }, { limit: lim[0], amount: 0 }], T0);
  assert.ok(Math.abs((await s.peek(lim, T0))[0] - 0.008) < 1e-12);
});

test('a max of 0 admits nothing', async () => {
  const s = new MemoryCounterStore();
  const r = await s.admit([requests(0)], T0);
  assert.equal(r.ok, false);
});

test('two limits with the same key share one counter, incremented once', async () => {
  const s = new MemoryCounterStore();
  const a = requests(5);
  assert.deepEqual(await s.admit([a, { ...a }], T0), { ok: true, usage: [1, 1] });
  assert.deepEqual(await s.admit([a], T0), { ok: true, usage: [2] });
});

test('record lands in the window current at record time', async () => {
  const s = new MemoryCounterStore();
  const b = budget(10, '1h');
  await s.record([{ limit: b, amount: 4 }], T0 + 3_599_999);
  assert.deepEqual(await s.peek([b], T0 + 3_599_999), [4]);
  await s.record([{ limit: b, amount: 1 }], T0 + 3_600_000);
  assert.deepEqual(await s.peek([b], T0 + 3_600_001), [1]);
});

test('cached(key) returns the last usage seen, 0 once the window is over, undefined if never seen', async () => {
  const s = new MemoryCounterStore();
  assert.equal(s.cached('requests:rl'), undefined);
  const now = Date.now();
  await s.admit([requests(10, '1h')], now);
  await s.admit([requests(10, '1h')], now);
  assert.equal(s.cached('requests:rl'), 2);
  const old = new MemoryCounterStore();
  await old.admit([requests(10, '1s')], now - 5000);
  assert.equal(old.cached('requests:rl'), 0);
});

test('memory stays bounded: ended windows go first, then the oldest keys', async () => {
  const s = new MemoryCounterStore({ maxKeys: 100 });
  for (let i = 0; i < 100; i++) await s.admit([{ key: `requests:old${i}`, max: 5, duration: '1s' }], T0);
  assert.equal(s.size, 100);
  // One second later every one of those windows has ended: they make room.
  await s.admit([{ key: 'requests:new', max: 5, duration: '1h' }], T0 + 1000);
  assert.equal(s.size, 1);
  for (let i = 0; i < 500; i++) await s.admit([{ key: `requests:live${i}`, max: 5, duration: '1h' }], T0 + 2000);
  assert.ok(s.size <= 100, `size ${s.size}`);
  // The newest keys survived with their counts.
  assert.deepEqual(await s.peek([{ key: 'requests:live499', max: 5, duration: '1h' }], T0 + 2000), [1]);
});

test('a clock stepping back keeps counting in the newest window instead of resetting', async () => {
  const s = new MemoryCounterStore();
  const lim = [requests(2)];
  await s.admit(lim, T0 + 60_000);
  await s.admit(lim, T0 + 60_000);
  const r = await s.admit(lim, T0 + 59_000);
  assert.equal(r.ok, false);
});
