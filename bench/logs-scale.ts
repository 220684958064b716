// The /api/logs calls the dashboard makes, timed against an already seeded store (see
// scripts/seed-logs.ts): medians of RUNS after one warm-up, store calls exactly as api/logs.ts makes them.
//   node bench/logs-scale.ts --sqlite ./logs.db
//   node bench/logs-scale.ts --postgres postgres://user@127.0.0.1:5432/db
import { parseArgs } from 'node:util';
import { openPostgresStore } from '../proxy/src/logs/postgres-store.ts';
import { parseFilters, parsePage } from '../proxy/src/logs/query.ts';
import { openSqliteStore } from '../proxy/src/logs/sqlite-store.ts';
import type { LogStore } from '../proxy/src/logs/store.ts';
import { histogramWindow } from '../proxy/src/logs/window.ts';
import { DEFAULT_GROUPS } from '../proxy/src/logs/breakdown.ts';
import type { BreakdownBy } from '../proxy/src/logs/record.ts';

// --end: when the seeded records end (ISO; default now), so a store seeded earlier is read over the same windows.
const { values } = parseArgs({ options: { sqlite: { type: 'string' }, postgres: { type: 'string' }, runs: { type: 'string', default: '5' }, only: { type: 'string' }, end: { type: 'string' } } });
const RUNS = Number(values.runs);

async function open(): Promise<LogStore> {
  if (values.sqlite) return openSqliteStore(values.sqlite);
  const u = new URL(values.postgres!);
  return openPostgresStore({ host: u.hostname, port: u.port || 5432, user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), db_name: u.pathname.slice(1), statement_timeout_ms: 600_000 });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const t0 = performance.now();
const store = await open();
const openMs = performance.now() - t0;
const HOUR = 3600_000;
const now = values.end ? Date.parse(values.end) : Date.now();
const q = (s: Record<string, string>) => parseFilters(s);
const iso = (ms: number): string => new Date(ms).toISOString();
/** GET /api/logs: the bounded summary, then the page, as the router runs them. */
const list = (query: Record<string, string>) => {
  const page = parsePage(query);
  const f = q(Object.fromEntries(Object.entries(query).filter(([k]) => !['limit', 'offset', 'sort_by', 'order', 'cursor'].includes(k))));
  return async () => {
    const summary = await store.listSummary(f);
    return Promise.all([store.search(f, page, { count: false, matching: summary.matching, many: summary.matching === undefined }), store.hasLogs()]);
  };
};
const hist = (kind: 'buckets' | 'latency', query: Record<string, string>, group: 'none' | 'model' | 'provider') => {
  const f = q(query);
  const w = histogramWindow(f);
  return () => (kind === 'buckets' ? store.buckets(f, w, group) : store.latency(f, w, group));
};
/** GET /api/logs/breakdown, as the overview asks for it. */
const breakdown = (query: Record<string, string>, by: BreakdownBy) => {
  const f = q(query);
  const w = histogramWindow(f);
  return () => store.breakdown(f, w, by, DEFAULT_GROUPS);
};
const day = { start_time: iso(now - 24 * HOUR), end_time: iso(now) };
const week = { start_time: iso(now - 7 * 24 * HOUR), end_time: iso(now) };
const month = { start_time: iso(now - 30 * 24 * HOUR), end_time: iso(now) };

const CALLS: [string, () => Promise<unknown>][] = [
  ['list: first page', list({})],
  ['list: page 500 (offset 24,950)', list({ offset: '24950' })],
  ['list: providers=anthropic', list({ providers: 'anthropic' })],
  ['list: models=gpt-4o', list({ models: 'gpt-4o' })],
  ['list: status=error', list({ status: 'error' })],
  ['list: objects=embedding', list({ objects: 'embedding' })],
  ['list: virtual_key_ids=vk-7', list({ virtual_key_ids: 'vk-7' })],
  ['list: selected_key_ids=groq-key-1', list({ selected_key_ids: 'groq-key-1' })],
  ['list: routing_rule_ids=rule-3', list({ routing_rule_ids: 'rule-3' })],
  ['list: routing_engine_used=governance', list({ routing_engine_used: 'governance' })],
  ['list: last 24 h', list(day)],
  ['list: min_latency=20000', list({ min_latency: '20000' })],
  ['list: min_tokens=5000', list({ min_tokens: '5000' })],
  ['list: min_cost=0.05', list({ min_cost: '0.05' })],
  ['list: missing_cost_only', list({ missing_cost_only: 'true' })],
  ['list: sort_by=latency', list({ sort_by: 'latency' })],
  ['list: content_search=kubernetes', list({ content_search: 'kubernetes' })],
  ['list: content_search=number 123457 (one record)', list({ content_search: 'number 123457:' })],
  ['stats: all', () => store.stats({})],
  ['stats: last 24 h', () => store.stats(q(day))],
  ['filterdata', () => store.filterData()],
  ['histogram: 24 h', hist('buckets', day, 'none')],
  ['histogram: 7 d', hist('buckets', week, 'none')],
  ['histogram: 30 d', hist('buckets', month, 'none')],
  ['histogram/cost (by model): 30 d', hist('buckets', month, 'model')],
  ['histogram/tokens/by-provider: 7 d', hist('buckets', week, 'provider')],
  ['histogram/latency: 24 h', hist('latency', day, 'none')],
  ['histogram/latency: 7 d', hist('latency', week, 'none')],
  ['histogram/latency/by-provider: 30 d', hist('latency', month, 'provider')],
  ['breakdown by provider: 24 h', breakdown(day, 'provider')],
  ['breakdown by provider: 7 d', breakdown(week, 'provider')],
  ['breakdown by provider: 30 d', breakdown(month, 'provider')],
  ['breakdown by virtual key: 24 h', breakdown(day, 'virtual_key')],
  ['breakdown by virtual key: 7 d', breakdown(week, 'virtual_key')],
  ['breakdown by virtual key: 30 d', breakdown(month, 'virtual_key')],
];

console.log(`store ${store.kind}, opened (migrations included) in ${openMs.toFixed(0)} ms`);
console.log('| call | median ms | max ms |');
console.log('|---|---:|---:|');
for (const [name, fn] of CALLS) {
  if (values.only && !name.includes(values.only)) continue;
  await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  console.log(`| ${name} | ${median(times).toFixed(1)} | ${Math.max(...times).toFixed(1)} |`);
}
await store.close();
