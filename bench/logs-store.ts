// Request-log store figures on SQLite and on a real PostgreSQL (a throw-away local cluster):
// batched insert throughput, then /api/logs-style queries on ROWS records (medians of RUNS).
//   node bench/logs-store.ts [rows]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../proxy/src/logs/sqlite-store.ts';
import { openPostgresStore } from '../proxy/src/logs/postgres-store.ts';
import type { LogStore } from '../proxy/src/logs/store.ts';
import type { LogRecord } from '../proxy/src/logs/record.ts';
import { parseFilters, parsePage } from '../proxy/src/logs/query.ts';
import { histogramWindow } from '../proxy/src/logs/window.ts';
import { LogWriter } from '../proxy/src/logs/writer.ts';
import { startPostgres } from '../test/helpers/postgres.ts';

const ROWS = Number(process.argv[2] ?? 100_000);
const RUNS = 5;
const BATCH = 500;
const NOW = Date.now();
const WEEK = 7 * 86_400_000;
const PROVIDERS = ['openai', 'anthropic', 'gemini', 'bedrock', 'azure'];
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

function record(i: number, prefix: string): LogRecord {
  const p = PROVIDERS[i % PROVIDERS.length]!;
  const ok = i % 20 !== 0;
  return {
    id: `${prefix}-${i}`,
    timestamp: NOW - Math.floor((i * 7919) % WEEK),
    object: i % 10 === 0 ? 'embedding' : 'chat.completion',
    provider: p,
    model: `${p}-model-${i % 4}`,
    virtual_key_id: `vk-${i % 50}`,
    selected_key_id: `key-${i % 10}`,
    routing_rule_ids: i % 3 === 0 ? [`rule-${i % 7}`] : [],
    routing_engines_used: i % 3 === 0 ? ['routing-rule'] : ['loadbalancing'],
    status: ok ? 'success' : 'error',
    stream: i % 2 === 0,
    prompt_tokens: 50 + (i % 500),
    completion_tokens: 20 + (i % 300),
    cost: i % 11 === 0 ? undefined : (i % 1000) / 100_000,
    latency: 20 + ((i * 31) % 2000),
    ttft: i % 2 === 0 ? 10 + (i % 200) : undefined,
    input_content: `{"messages":[{"role":"user","content":"${WORDS[i % 10]} ${WORDS[(i * 3) % 10]} request ${i}"}]}`,
    output_content: `answer about ${WORDS[(i * 7) % 10]}`,
    error_details: ok ? undefined : { status: 429, message: 'rate limited' },
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm (statement cache, buffers)
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

async function bench(name: string, store: LogStore): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  // Direct batched inserts (what the writer does), then the writer end to end on a further 20k.
  let t = performance.now();
  for (let i = 0; i < ROWS; i += BATCH) {
    const batch: LogRecord[] = [];
    for (let j = i; j < Math.min(ROWS, i + BATCH); j++) batch.push(record(j, 'b'));
    await store.insert(batch);
  }
  out.insert_rps = Math.round(ROWS / ((performance.now() - t) / 1000));
  const writer = new LogWriter(store, { batchSize: BATCH, maxQueue: 50_000, flushIntervalMs: 50 });
  const extra = 20_000;
  t = performance.now();
  for (let i = 0; i < extra; i++) writer.enqueue(record(i, 'w'));
  const enqueueMs = performance.now() - t;
  await writer.flush();
  out.writer_rps = Math.round(extra / ((performance.now() - t) / 1000));
  out.enqueue_us = Number(((enqueueMs * 1000) / extra).toFixed(2));
  out.writer_dropped = writer.dropped;
  await writer.close();

  const filtered = parseFilters({ providers: 'openai,anthropic', status: 'success', min_latency: '100', max_latency: '1500' });
  const page = parsePage({});
  out.search_filtered_ms = await timeIt(() => store.search(filtered, page));
  out.stats_filtered_ms = await timeIt(() => store.stats(filtered));
  out.search_all_ms = await timeIt(() => store.search({}, page));
  out.stats_all_ms = await timeIt(() => store.stats({}));
  out.search_rule_ms = await timeIt(() => store.search(parseFilters({ routing_rule_ids: 'rule-3' }), page));
  out.search_sort_latency_ms = await timeIt(() => store.search({}, parsePage({ sort_by: 'latency' })));
  out.content_search_ms = await timeIt(() => store.search(parseFilters({ content_search: 'juliet' }), page));
  const w = histogramWindow({}, NOW);
  out.histogram_24h_ms = await timeIt(() => store.buckets({}, w, 'none'));
  const week = histogramWindow({ start_time: NOW - WEEK, end_time: NOW }, NOW);
  out.histogram_week_by_model_ms = await timeIt(() => store.buckets({}, week, 'model'));
  out.latency_histogram_week_ms = await timeIt(() => store.latency({}, week, 'provider'));
  out.filterdata_ms = await timeIt(() => store.filterData());
  for (const [k, v] of Object.entries(out)) out[k] = typeof v === 'number' && k.endsWith('_ms') ? Number(v.toFixed(1)) : v;
  console.log(JSON.stringify({ store: name, rows: ROWS + extra, ...out }));
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'skybridge-logs-bench-'));
try {
  const lite = await openSqliteStore(join(dir, 'logs.db'));
  await bench('sqlite', lite);
  await lite.close();
  const pg = await startPostgres();
  try {
    const store = await openPostgresStore({ host: pg.host, port: pg.port, user: pg.user, password: '', db_name: pg.database, ssl_mode: 'disable' });
    await bench('postgres', store);
    await store.close();
  } finally {
    await pg.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
