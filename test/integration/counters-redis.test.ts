// RedisCounterStore against a real redis-server: atomic admissions across separate clients (as
// separate replicas would hold), budgets under concurrency, window roll-over, outages.
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { startRedis, type RunningRedis } from '../helpers/redis.ts';
import { patience } from '../helpers/patience.ts';
import { RedisCounterStore } from '../../proxy/src/governance/counters/redis.ts';
import { CounterStoreUnavailableError, type CounterStore, type Limit } from '../../proxy/src/governance/counters/store.ts';

let redis: RunningRedis;
let inspect: ReturnType<typeof createClient>;
const stores: RedisCounterStore[] = [];

async function store(options: ConstructorParameters<typeof RedisCounterStore>[1] = {}, prefix?: string): Promise<RedisCounterStore> {
  const s = new RedisCounterStore({ addr: redis.addr, ...(prefix === undefined ? {} : { key_prefix: prefix }) }, options);
  stores.push(s);
  await s.ready();
  return s;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  redis = await startRedis();
  inspect = createClient({ url: redis.url });
  inspect.on('error', () => {});
  await inspect.connect();
});

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

after(async () => {
  inspect.destroy();
  await redis.stop();
});

beforeEach(() => redis.flush());

describe('RedisCounterStore', () => {
  test('all or nothing: a rejected admission consumes nothing; keys carry prefix, window and expiry', async () => {
    const s = await store({}, 'gw1:');
    const now = Date.now();
    const rl: Limit = { key: 'requests:rl1', max: 10, duration: '1h' };
    const other: Limit = { key: 'requests:rl2', max: 10, duration: '1d' };
    const b: Limit = { key: 'budget:b1', max: 0.5, duration: '1M', calendarAligned: true };
    assert.deepEqual(await s.admit([rl, other, b], now), { ok: true, usage: [1, 1, 0] });
    await s.record([{ limit: b, amount: 0.3 }], now);
    await s.record([{ limit: b, amount: 0.25 }], now);
    const r = await s.admit([rl, other, b], now);
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.index === 2);
    assert.ok(!r.ok && r.retryAfterMs > 0);
    assert.deepEqual(await s.peek([rl, other, b], now), [1, 1, 0.55]);

    const hourStart = Math.floor(now / 3_600_000) * 3_600_000;
    assert.equal(await inspect.get(`gw1:c:requests:rl1:${hourStart}`), '1');
    const pttl = await inspect.pTTL(`gw1:c:requests:rl1:${hourStart}`);
    const expected = hourStart + 3_600_000 + 60_000 - Date.now();
    assert.ok(Math.abs(pttl - expected) < 2000, `expires a minute after its window ends (pttl ${pttl}, expected ~${expected})`);
    assert.ok((await inspect.pTTL((await inspect.keys('gw1:c:budget:b1:*'))[0])) > 0, 'budget keys expire too');
  });

  test('three clients admitting concurrently on a request limit of N admit exactly N', async () => {
    const clients = await Promise.all([store(), store(), store()]);
    const N = 250;
    const limit: Limit = { key: 'requests:shared', max: N, duration: '1h' };
    const now = Date.now();
    const results = await Promise.all(clients.flatMap((c) => Array.from({ length: 200 }, () => c.admit([limit], now))));
    const admitted = results.filter((r) => r.ok);
    assert.equal(admitted.length, N);
    // Every admitted request saw a distinct count 1..N: no two were counted as the same.
    const seen = admitted.map((r) => r.usage[0]).sort((a, b) => a - b);
    assert.deepEqual(seen, Array.from({ length: N }, (_, i) => i + 1));
    for (const r of results) if (!r.ok) assert.equal(r.usage[0], N);
    assert.deepEqual(await clients[0].peek([limit], now), [N]);
  });

  test('concurrent admits with several limits stay all-or-nothing under contention', async () => {
    const clients = await Promise.all([store(), store(), store()]);
    const narrow: Limit = { key: 'requests:narrow', max: 40, duration: '1h' };
    const wide: Limit = { key: 'requests:wide', max: 1000, duration: '1h' };
    const now = Date.now();
    const results = await Promise.all(clients.flatMap((c) => Array.from({ length: 100 }, () => c.admit([wide, narrow], now))));
    assert.equal(results.filter((r) => r.ok).length, 40);
    // The wide limit counted only the admitted ones.
    assert.deepEqual(await clients[1].peek([wide, narrow], now), [40, 40]);
  });

  test('budget under concurrent admit+record loops from three clients overshoots by at most what was in flight', async () => {
    // Each admitted request saw usage < max. When the last one was admitted, every request not
    // yet recorded was in flight, and there are at most C of them (C = clients x loops each). So
    // the final usage < max + C x cost: the budget is never exceeded by more than the in-flight
    // amount. (It cannot be tighter without reserving an estimated cost at admission.)
    const clients = await Promise.all([store(), store(), store()]);
    const LOOPS = 4;
    const C = clients.length * LOOPS;
    const cost = 0.07;
    const budget: Limit = { key: 'budget:shared', max: 2, duration: '1d' };
    let admitted = 0;
    async function loop(s: CounterStore): Promise<void> {
      for (;;) {
        const r = await s.admit([budget], Date.now());
        if (!r.ok) return;
        admitted++;
        await sleep(Math.random() * 5);
        await s.record([{ limit: budget, amount: cost }], Date.now());
      }
    }
    await Promise.all(clients.flatMap((c) => Array.from({ length: LOOPS }, () => loop(c))));
    const [final] = await clients[0].peek([budget], Date.now());
    assert.ok(Math.abs(final - admitted * cost) < 1e-9, 'every admitted request was charged');
    assert.ok(final >= budget.max, `spent until exhausted (${final})`);
    assert.ok(final < budget.max + C * cost, `overshoot ${final - budget.max} within ${C} x ${cost}`);
    assert.ok(admitted > budget.max / cost - 1, `admitted ${admitted}`);
  });

  test('budgets keep fractions of a cent exactly enough, summed across clients', async () => {
    const [a, b] = await Promise.all([store(), store()]);
    const budget: Limit = { key: 'budget:tiny', max: 100, duration: '1d' };
    const now = Date.now();
    await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 2 ? a : b).record([{ limit: budget, amount: 0.000123 }], now)));
    const [total] = await a.peek([budget], now);
    assert.ok(Math.abs(total - 0.0615) < 1e-9, String(total));
    const tokens: Limit = { key: 'tokens:t', max: 100, duration: '1h' };
    await a.record([{ limit: tokens, amount: 10.6 }], now);
    assert.deepEqual(await b.peek([tokens], now), [11]);
  });

  test('usage recorded and not yet sent counts for the next admission, and close() sends what is queued', async () => {
    const s = await store({ recordDelayMs: 60_000 });
    const budget: Limit = { key: 'budget:queued', max: 1, duration: '1d' };
    const now = Date.now();
    assert.equal((await s.admit([budget], now)).ok, true);
    const recorded = s.record([{ limit: budget, amount: 1.5 }], now);
    // The admission carries the queued add ahead of itself: the budget is already spent.
    const r = await s.admit([budget], now);
    assert.ok(!r.ok && r.index === 0);
    assert.deepEqual(r.usage, [1.5]);
    await recorded;
    assert.equal(s.cached('budget:queued'), 1.5);

    const tokens: Limit = { key: 'tokens:queued', max: 100, duration: '1h' };
    const late = s.record([{ limit: tokens, amount: 7 }], now);
    await s.close();
    await late;
    const other = await store();
    assert.deepEqual(await other.peek([tokens, budget], now), [7, 1.5], 'close() sent the queued usage');
  });

  test('queued usage goes alone after recordDelayMs when no admission comes', async () => {
    const [a, b] = await Promise.all([store({ recordDelayMs: 20 }), store()]);
    const budget: Limit = { key: 'budget:alone', max: 10, duration: '1d' };
    const t = performance.now();
    await a.record([{ limit: budget, amount: 0.25 }, { limit: budget, amount: 0.5 }], Date.now());
    assert.ok(performance.now() - t >= 15, 'waited for an admission to carry it');
    assert.deepEqual(await b.peek([budget], Date.now()), [0.75]);
  });

  test('a 1s window rolls over: the next second admits again, and the old key expires', async () => {
    const s = await store({ expiryMarginMs: 0 });
    const limit: Limit = { key: 'requests:persec', max: 2, duration: '1s' };
    // Start early in a second so the three admissions share it.
    await sleep(1000 - (Date.now() % 1000) + 5);
    const t = Date.now();
    assert.equal((await s.admit([limit], t)).ok, true);
    assert.equal((await s.admit([limit], t)).ok, true);
    const r = await s.admit([limit], t);
    assert.ok(!r.ok);
    assert.ok(!r.ok && r.retryAfterMs > 0 && r.retryAfterMs <= 1000, String(!r.ok && r.retryAfterMs));
    const oldKey = `skybridge:c:requests:persec:${t - (t % 1000)}`;
    assert.equal(await inspect.exists(oldKey), 1);
    await sleep(r.ok ? 0 : r.retryAfterMs + 20);
    const next = await s.admit([limit], Date.now());
    assert.deepEqual(next, { ok: true, usage: [1] });
    assert.equal(await inspect.exists(oldKey), 0, 'the finished window is gone from Redis');
  });

  test('cached() answers synchronously with what this client last saw', async () => {
    const [a, b] = await Promise.all([store(), store()]);
    const limit: Limit = { key: 'requests:cache', max: 100, duration: '1h' };
    const now = Date.now();
    assert.equal(b.cached('requests:cache'), undefined);
    await a.admit([limit], now);
    await a.admit([limit], now);
    assert.equal(a.cached('requests:cache'), 2);
    assert.equal(b.cached('requests:cache'), undefined, 'b has not asked yet');
    await b.peek([limit], now);
    assert.equal(b.cached('requests:cache'), 2);
  });

  test('Redis down: admit fails closed with a 503, and the store reconnects when Redis returns', async () => {
    const s = await store();
    const open = await store({ onUnavailable: 'open' });
    const limit: Limit = { key: 'requests:outage', max: 100, duration: '1h' };
    assert.equal((await s.admit([limit], Date.now())).ok, true);
    assert.equal((await open.admit([limit], Date.now())).ok, true);
    await redis.stop();
    await assert.rejects(s.admit([limit], Date.now()), (err: unknown) => {
      assert.ok(err instanceof CounterStoreUnavailableError);
      assert.equal(err.status, 503);
      assert.equal(err.code, 'counter_store_unavailable');
      assert.match(err.message, /counter store unavailable/);
      return true;
    });
    await assert.rejects(s.record([{ limit: { key: 'budget:x', max: 1, duration: '1d' }, amount: 1 }], Date.now()), CounterStoreUnavailableError);
    // Fail-open admits with the last usage it saw.
    assert.deepEqual(await open.admit([limit], Date.now()), { ok: true, usage: [2] });

    await redis.restart(); // a fresh, empty server: the admit script must be loaded again
    let result;
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        result = await s.admit([limit], Date.now());
        break;
      } catch (err) {
        assert.ok(err instanceof CounterStoreUnavailableError);
        if (Date.now() > deadline) throw err;
        await sleep(50);
      }
    }
    assert.deepEqual(result, { ok: true, usage: [1] });
    assert.equal(s.isReady, true);
  });

  test('a hung Redis fails admit within the command timeout instead of blocking the request', async () => {
    const s = await store({ commandTimeoutMs: 200 });
    const limit: Limit = { key: 'requests:hung', max: 100, duration: '1h' };
    assert.equal((await s.admit([limit], Date.now())).ok, true);
    process.kill(redis.pid, 'SIGSTOP');
    try {
      const t = performance.now();
      await assert.rejects(s.admit([limit], Date.now()), CounterStoreUnavailableError);
      const took = performance.now() - t;
      assert.ok(took >= 190 && took < 1500, `failed after ${took} ms`);
    } finally {
      process.kill(redis.pid, 'SIGCONT');
    }
    // Once Redis answers again, so does the store (the late reply, or the next probe, says so).
    const deadline = Date.now() + patience(5000);
    while (!s.isReady && Date.now() < deadline) await sleep(25);
    const r = await s.admit([limit], Date.now());
    assert.ok(r.ok);
  });
});
