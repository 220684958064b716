// Semantic lookup (nearest-neighbour search, the embedding call excluded) on the response cache's
// server-backed stores, side by side in one run: Redis Stack (RediSearch HNSW) and PostgreSQL with
// pgvector (HNSW), each a throw-away local server, filled through the store's own put() with ENTRIES
// entries spread over SCOPES scopes, then SEARCHES sequential nearest() calls (after a warm-up),
// half of them paraphrases of stored texts (hits) and half unrelated texts (misses).
// Vectors are the mock provider's embeddings at text-embedding-3-small's 1536 dimensions. Filling
// 100,000 entries takes ~10 min per server store on 2 cores (each put is a real cache write).
//   node bench/cache-stores.ts [--entries 100000] [--dim 1536] [--scopes 10] [--searches 2000] [--stores redis,postgres,sqlite]
import { randomUUID, createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CacheStore } from '../proxy/src/cache/store.ts';
import { openRedisCacheStore } from '../proxy/src/cache/redis-store.ts';
import { openPgCacheStore } from '../proxy/src/cache/pg-store.ts';
import { SqliteCacheStore } from '../proxy/src/cache/sqlite-store.ts';
import { embedText } from '../test/mock-provider/embeddings.ts';
import { startRedisStack } from '../test/helpers/redis-stack.ts';
import { startPgvector } from '../test/helpers/pgvector.ts';
import { percentile } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    dim: { type: 'string', default: '1536' },
    scopes: { type: 'string', default: '10' },
    searches: { type: 'string', default: '2000' },
    stores: { type: 'string', default: 'redis,postgres' },
  },
});
const ENTRIES = Number(args.entries);
const DIM = Number(args.dim);
const SCOPES = Number(args.scopes);
const SEARCHES = Number(args.searches);
const WARMUP = Math.min(200, SEARCHES);
const CONCURRENT_PUTS = 32;
const THRESHOLD = 0.8;
const NS = 'bench';

// Prompts made of words from a fixed vocabulary: deterministic, varied, and paraphrasable.
const WORDS = ('capital france germany spain italy weather forecast tomorrow recipe bread pasta soup train ticket price ' +
  'flight delay hotel booking password reset account invoice refund shipping order status laptop battery phone screen ' +
  'python error install package database index query latency kubernetes pod restart memory limit poem ocean mountain ' +
  'river history rome empire war treaty physics quantum gravity energy planet orbit moon galaxy music guitar piano song')
  .split(' ');

function prompt(i: number): string {
  // A fixed pseudo-random walk over the vocabulary per index.
  let x = (i + 1) * 2654435761;
  const words: string[] = [];
  for (let k = 0; k < 6; k++) {
    x = (x ^ (x >>> 13)) * 1274126177;
    words.push(WORDS[Math.abs(x) % WORDS.length]!);
  }
  return `${words.join(' ')} ${i}`;
}

interface Result {
  store: string;
  fillSeconds: number;
  p50: number;
  p99: number;
  max: number;
  hitRate: number;
  falseMisses: number;
}

async function measure(name: string, store: CacheStore): Promise<Result> {
  await store.init(NS, DIM);
  const now = Date.now();
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ENTRIES) {
      const i = next++;
      const text = prompt(i);
      await store.put(NS, {
        id: randomUUID(),
        scope: `vk-${i % SCOPES}|team|openai|gpt-4o-mini`,
        cacheKey: 'team',
        hash: createHash('sha256').update(text).digest('hex'),
        vector: embedText(text, DIM),
        value: JSON.stringify({ choices: [{ message: { content: `answer ${i}` } }] }),
        createdAt: now,
        expiresAt: now + 3_600_000,
      });
      if (i % 10_000 === 0 && i > 0) process.stderr.write(`${name}: ${i} entries\n`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_PUTS }, worker));
  const fillSeconds = (performance.now() - t0) / 1000;
  const samples: number[] = [];
  let hits = 0;
  let falseMisses = 0;
  for (let q = 0; q < WARMUP + SEARCHES; q++) {
    const i = (q * 7919) % ENTRIES;
    const hit = q % 2 === 0;
    // A hit query: the stored prompt reworded (case, punctuation, an extra function word); a miss
    // query: words from outside the vocabulary.
    const text = hit ? `Please, ${prompt(i).toUpperCase()}?` : `zebra xylophone quokka ${q}`;
    const vector = embedText(text, DIM);
    const start = performance.now();
    const match = await store.nearest(NS, `vk-${i % SCOPES}|team|openai|gpt-4o-mini`, vector, THRESHOLD, Date.now());
    const ms = performance.now() - start;
    if (q < WARMUP) continue;
    samples.push(ms);
    if (match) hits++;
    if (hit && !match) falseMisses++;
  }
  const result = {
    store: name,
    fillSeconds: Math.round(fillSeconds),
    p50: round(percentile(samples, 0.5)),
    p99: round(percentile(samples, 0.99)),
    max: round(Math.max(...samples)),
    hitRate: round(hits / SEARCHES),
    falseMisses,
  };
  process.stderr.write(`${JSON.stringify(result)}\n`);
  return result;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

const results: Result[] = [];
for (const which of (args.stores ?? '').split(',').filter(Boolean)) {
  if (which === 'redis') {
    const server = await startRedisStack();
    const store = openRedisCacheStore({ addr: server.addr });
    try {
      results.push(await measure('redis (Redis Stack 7.4, RediSearch HNSW)', store));
    } finally {
      await store.close();
      await server.stop();
    }
  } else if (which === 'postgres') {
    const server = await startPgvector();
    const store = openPgCacheStore(server.storeConfig);
    try {
      results.push(await measure('postgres (PostgreSQL 18, pgvector 0.8 HNSW)', store));
    } finally {
      await store.close();
      await server.stop();
    }
  } else if (which === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'skybridge-cache-bench-'));
    const store = new SqliteCacheStore(join(dir, 'cache.db'));
    try {
      results.push(await measure('sqlite (embedded)', store));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  } else {
    throw new Error(`unknown store ${which}: redis, postgres or sqlite`);
  }
}

console.log(`\nSemantic lookup: ${ENTRIES} entries of dimension ${DIM} in ${SCOPES} scopes, ${SEARCHES} sequential nearest() calls (half hits), threshold ${THRESHOLD}\n`);
console.log('| store | fill (s) | p50 ms | p99 ms | max ms | hit rate | hits missed |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of results) console.log(`| ${r.store} | ${r.fillSeconds} | ${r.p50} | ${r.p99} | ${r.max} | ${r.hitRate} | ${r.falseMisses} |`);
