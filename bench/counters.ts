// Latency of the budget/rate-limit counters on the request path: admit() one call at a time (what
// one request waits for), for the in-process store and for Redis over loopback, plus record() and
// admission throughput with many calls in flight.
//
//   node bench/counters.ts                       # starts its own redis-server (test helper)
//   node bench/counters.ts --redis 127.0.0.1:6379 --calls 5000
import { parseArgs } from 'node:util';
import { MemoryCounterStore } from '../proxy/src/governance/counters/memory.ts';
import { RedisCounterStore } from '../proxy/src/governance/counters/redis.ts';
import type { CounterStore, Limit } from '../proxy/src/governance/counters/store.ts';
import { startRedis, type RunningRedis } from '../test/helpers/redis.ts';
import { summarize } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    redis: { type: 'string' },
    calls: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '64' },
  },
  strict: true,
});
const CALLS = Number(values.calls);
const CONCURRENCY = Number(values.concurrency);

// A typical request under a virtual key: its budget and both rate limits, plus a provider budget.
const ONE: Limit[] = [{ key: 'requests:bench-vk', max: 1e12, duration: '1h' }];
const FOUR: Limit[] = [
  { key: 'budget:bench-vk', max: 1e12, duration: '1M', calendarAligned: true },
  { key: 'tokens:bench-vk', max: 1e12, duration: '1m' },
  { key: 'requests:bench-vk', max: 1e12, duration: '1m' },
  { key: 'budget:bench-provider', max: 1e12, duration: '1d' },
];

const fmt = (us: number) => us.toFixed(1).padStart(8);

async function sequential(name: string, fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < Math.min(500, CALLS); i++) await fn(); // warm-up: JIT, connection, script cache
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  const s = summarize(samples);
  console.log(`${name.padEnd(34)} p50 ${fmt(s.p50)} µs   p99 ${fmt(s.p99)} µs   max ${fmt(s.max)} µs   (n=${s.n})`);
}

async function throughput(name: string, fn: () => Promise<unknown>): Promise<void> {
  const total = CALLS * 4;
  let started = 0;
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started++ < total) await fn();
    }),
  );
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  console.log(`${name.padEnd(34)} ${Math.round(total / s).toLocaleString('en-US')} admits/s with ${CONCURRENCY} in flight`);
}

async function measure(label: string, store: CounterStore): Promise<void> {
  await sequential(`${label} admit, 1 limit`, () => store.admit(ONE, Date.now()));
  await sequential(`${label} admit, 4 limits`, () => store.admit(FOUR, Date.now()));
  const adds = [
    { limit: FOUR[0], amount: 0.0012 },
    { limit: FOUR[1], amount: 321 },
    { limit: FOUR[3], amount: 0.0012 },
  ];
  await sequential(`${label} record, 3 adds`, () => store.record(adds, Date.now()));
  await throughput(`${label} admit, 4 limits`, () => store.admit(FOUR, Date.now()));
}

let own: RunningRedis | undefined;
const addr = values.redis ?? (own = await startRedis()).addr;
console.log(`node ${process.version}, ${CALLS} sequential calls per row; redis at ${addr}${own ? ' (own redis-server, loopback)' : ''}`);

const memory = new MemoryCounterStore();
await measure('memory', memory);
await memory.close();

const redis = new RedisCounterStore({ addr, key_prefix: 'skybridge-bench:' });
await redis.ready();
await measure('redis ', redis);
await redis.close();
await own?.stop();
