// Fills a request-log store with synthetic but realistic records, through the store's own insert
// (so its schema, indexes and derived tables are exactly what the gateway writes):
//   node scripts/seed-logs.ts --rows 1000000 --sqlite ./logs.db
//   node scripts/seed-logs.ts --rows 1000000 --postgres postgres://user@127.0.0.1:5432/db
// Options: --days 30 (spread of timestamps, ending now), --content 0.3 (share of records with
// request/response content), --seed 1 (same seed, same records), --batch 5000.
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MIGRATIONS } from '../proxy/src/logs/migrations.ts';
import { openPostgresStore } from '../proxy/src/logs/postgres-store.ts';
import { errorClass, type LogRecord, type RoutingEngine } from '../proxy/src/logs/record.ts';
import { LOG_COLUMNS, logRow, sqliteInsertRollups } from '../proxy/src/logs/sql-store.ts';
import { SQLITE_DIALECT } from '../proxy/src/logs/sqlite-driver.ts';
import { openSqliteStore, SqliteDriver } from '../proxy/src/logs/sqlite-store.ts';
import type { LogStore } from '../proxy/src/logs/store.ts';

/** Model, provider and price per 1k prompt / completion tokens; weights make a few models dominate. */
const MODELS: readonly { model: string; provider: string; pin: number; pout: number; weight: number; object?: string }[] = [
  { model: 'gpt-4o-mini', provider: 'openai', pin: 0.00015, pout: 0.0006, weight: 30 },
  { model: 'gpt-4o', provider: 'openai', pin: 0.0025, pout: 0.01, weight: 12 },
  { model: 'gpt-4.1', provider: 'openai', pin: 0.002, pout: 0.008, weight: 6 },
  { model: 'o3-mini', provider: 'openai', pin: 0.0011, pout: 0.0044, weight: 3 },
  { model: 'text-embedding-3-small', provider: 'openai', pin: 0.00002, pout: 0, weight: 10, object: 'embedding' },
  { model: 'claude-3-5-sonnet-20241022', provider: 'anthropic', pin: 0.003, pout: 0.015, weight: 10 },
  { model: 'claude-3-5-haiku-20241022', provider: 'anthropic', pin: 0.0008, pout: 0.004, weight: 6 },
  { model: 'gemini-2.0-flash', provider: 'gemini', pin: 0.0001, pout: 0.0004, weight: 8 },
  { model: 'gemini-1.5-pro', provider: 'vertex', pin: 0.00125, pout: 0.005, weight: 3 },
  { model: 'anthropic.claude-3-haiku', provider: 'bedrock', pin: 0.00025, pout: 0.00125, weight: 3 },
  { model: 'gpt-4o', provider: 'azure', pin: 0.0025, pout: 0.01, weight: 4 },
  { model: 'llama-3.1-70b-versatile', provider: 'groq', pin: 0.00059, pout: 0.00079, weight: 3 },
  { model: 'mistral-large-latest', provider: 'mistral', pin: 0.002, pout: 0.006, weight: 1 },
  { model: 'rerank-english-v3.0', provider: 'cohere', pin: 0, pout: 0, weight: 1, object: 'rerank' },
];
const TOTAL_WEIGHT = MODELS.reduce((a, m) => a + m.weight, 0);
const OBJECTS = ['chat.completion', 'chat.completion', 'chat.completion', 'chat.completion', 'responses', 'text.completion'];
const TOPICS = [
  'invoice', 'refund', 'kubernetes', 'postgres', 'weather', 'translate', 'summarize', 'contract', 'recipe', 'poem',
  'python', 'typescript', 'marketing', 'onboarding', 'password', 'shipping', 'quarterly', 'sentiment', 'itinerary', 'diagnosis',
];
const ERRORS = [
  { status: 429, message: 'rate limit exceeded', type: 'rate_limit_error' },
  { status: 500, message: 'upstream provider error', type: 'api_error' },
  { status: 400, message: 'context length exceeded', type: 'invalid_request_error' },
  { status: 504, message: 'upstream timed out', type: 'timeout_error' },
];

/** mulberry32: small, fast, seedable. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SeedOptions {
  rows: number;
  days?: number;
  /** Share of records carrying content, 0..1. */
  content?: number;
  seed?: number;
  batch?: number;
  /** Newest timestamp (ms); default now. */
  end?: number;
  /** Id prefix, so several seedings of one store do not collide. */
  prefix?: string;
  onProgress?: (done: number) => void;
}

/** The i-th synthetic record generator; deterministic for a seed. */
export function recordMaker(opts: SeedOptions): (i: number) => LogRecord {
  const rand = rng(opts.seed ?? 1);
  const days = opts.days ?? 30;
  const end = opts.end ?? Date.now();
  const span = days * 86_400_000;
  const contentShare = opts.content ?? 0.3;
  const prefix = opts.prefix ?? 'seed';
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  return (i: number): LogRecord => {
    // Uniform position in the range, thinned at night so the traffic has a daily shape.
    let ts = end - Math.floor(rand() * span);
    const hour = new Date(ts).getUTCHours();
    if ((hour < 6 || hour > 21) && rand() < 0.6) ts = end - Math.floor(rand() * span);
    let w = rand() * TOTAL_WEIGHT;
    const m = MODELS.find((x) => (w -= x.weight) < 0) ?? MODELS[0]!;
    const object = m.object ?? pick(OBJECTS);
    const r = rand();
    const status = r < 0.935 ? 'success' : r < 0.995 ? 'error' : 'processing';
    const prompt = object === 'embedding' ? 5 + Math.floor(rand() * 400) : 20 + Math.floor(-Math.log(1 - rand()) * 800);
    const completion = object === 'chat.completion' || object === 'responses' || object === 'text.completion' ? Math.floor(-Math.log(1 - rand()) * 250) : 0;
    // Log-normal-ish latency: most requests take about a second, a long tail up to a minute.
    const latency = status === 'processing' ? undefined : Math.min(60_000, Math.round(Math.exp(6.2 + rand() * 1.6 + (rand() < 0.03 ? 2 : 0)) + completion * 3));
    const vk = Math.floor(Math.pow(rand(), 2) * 200);
    const rule = rand() < 0.15 ? `rule-${Math.floor(rand() * 12)}` : undefined;
    const engines: RoutingEngine[] = rule ? ['routing-rule'] : rand() < 0.5 ? ['loadbalancing'] : ['governance', 'loadbalancing'];
    const topic = pick(TOPICS);
    const withContent = rand() < contentShare;
    const stream = object === 'chat.completion' && rand() < 0.4;
    const priced = rand() > 0.03;
    // The error drawn below (in the same order as before, so a seed gives the same records) and
    // what follows from it: its status code and whose error it is.
    let error: (typeof ERRORS)[number] | undefined;
    return {
      id: `${prefix}-${i.toString(36).padStart(7, '0')}-${Math.floor(rand() * 1e9).toString(36)}`,
      parent_request_id: rand() < 0.02 ? `${prefix}-parent-${Math.floor(rand() * 1e6)}` : undefined,
      timestamp: ts,
      object,
      provider: m.provider,
      model: m.model,
      requested_model: rand() < 0.1 ? 'default' : m.model,
      virtual_key_id: rand() < 0.05 ? undefined : `vk-${vk}`,
      virtual_key_name: `team-${vk % 40}-key-${vk}`,
      team_id: `team-${vk % 40}`,
      customer_id: rand() < 0.3 ? `cust-${Math.floor(rand() * 1000)}` : undefined,
      selected_key_id: `${m.provider}-key-${Math.floor(rand() * 3)}`,
      selected_key_name: `${m.provider} key ${Math.floor(rand() * 3)}`,
      routing_rule_ids: rule ? [rule] : undefined,
      routing_rule_name: rule ? `Rule ${rule.slice(5)}` : undefined,
      routing_engines_used: engines,
      number_of_retries: status === 'error' ? Math.floor(rand() * 3) : rand() < 0.02 ? 1 : 0,
      fallback_index: rand() < 0.03 ? 1 : 0,
      status,
      error_details: (error = status === 'error' ? pick(ERRORS) : undefined),
      status_code: error ? error.status : status === 'success' ? 200 : undefined,
      error_class: error ? errorClass(error.status, error.status >= 500 || error.status === 429) : undefined,
      cache_hit: status === 'success' && i % 20 === 0,
      stream,
      prompt_tokens: status === 'success' ? prompt : 0,
      completion_tokens: status === 'success' ? completion : 0,
      cached_tokens: rand() < 0.2 ? Math.floor(prompt / 2) : 0,
      cost: status === 'success' && priced ? (prompt * m.pin + completion * m.pout) / 1000 : undefined,
      latency,
      ttft: stream && latency !== undefined ? Math.round(latency * (0.1 + rand() * 0.3)) : undefined,
      metadata: rand() < 0.1 ? { env: pick(['prod', 'staging']), app: pick(['chat', 'search', 'batch']) } : undefined,
      input_content: withContent
        ? JSON.stringify({ model: m.model, messages: [{ role: 'user', content: `Please help with this ${topic} task number ${i}: ${pick(TOPICS)} and ${pick(TOPICS)}.` }] })
        : undefined,
      output_content: withContent && status === 'success' ? `Here is the ${topic} answer (${completion} tokens) covering ${pick(TOPICS)}.` : undefined,
    };
  };
}

/** Inserts `rows` records in batches through `store.insert`; resolves with records per second. */
export async function seedLogs(store: LogStore, opts: SeedOptions): Promise<number> {
  const make = recordMaker(opts);
  const batch = opts.batch ?? 5000;
  const t = performance.now();
  for (let i = 0; i < opts.rows; i += batch) {
    const records: LogRecord[] = [];
    for (let j = i; j < Math.min(opts.rows, i + batch); j++) records.push(make(j));
    await store.insert(records);
    opts.onProgress?.(Math.min(opts.rows, i + batch));
  }
  return opts.rows / ((performance.now() - t) / 1000);
}

/**
 * A new SQLite store file with the same records as seedLogs, fast: the schema from the store's own
 * migrations, then every record in one transaction through prepared statements in the store's row
 * layout (sql-store.ts logRow), and the roll-ups' per-batch upserts run once over all of them. The
 * triggers (the content index) fire as on any insert. Resolves with records per second.
 */
export async function seedSqliteFile(path: string, opts: SeedOptions): Promise<number> {
  const t = performance.now();
  const driver = new SqliteDriver(path);
  await driver.migrate(MIGRATIONS);
  await driver.close();
  const db = new DatabaseSync(path);
  try {
    // One writer and a file nobody reads yet: no WAL copy of every page, no fsync per commit.
    db.exec('PRAGMA journal_mode = DELETE');
    db.exec('PRAGMA synchronous = OFF');
    db.exec('PRAGMA cache_size = -262144');
    const make = recordMaker(opts);
    const now = Date.now();
    const logs = db.prepare(`INSERT INTO logs (${LOG_COLUMNS.join(', ')}) VALUES (${LOG_COLUMNS.map(() => '?').join(', ')})`);
    const rules = db.prepare('INSERT INTO log_routing_rules (rule_id, log_id, timestamp) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
    // The secondary indexes are built once after the rows (a sort each) instead of updated per row,
    // from their own definitions: the file ends with exactly the schema the migrations made.
    const indexes = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('logs', 'log_routing_rules') AND sql IS NOT NULL").all() as { name: string; sql: string }[];
    db.exec('BEGIN');
    for (const i of indexes) db.exec(`DROP INDEX ${i.name}`);
    for (let i = 0; i < opts.rows; i++) {
      const r = make(i);
      logs.run(...(logRow(r, now) as (string | number | null)[]));
      for (const rule of new Set(r.routing_rule_ids ?? [])) rules.run(rule, r.id, Math.round(r.timestamp));
      if ((i + 1) % 100_000 === 0) opts.onProgress?.(i + 1);
    }
    for (const i of indexes) db.exec(i.sql);
    const upTo = Number((db.prepare('SELECT COALESCE(max(rowid), 0) AS r FROM logs').get() as { r: number }).r);
    for (const sql of sqliteInsertRollups(SQLITE_DIALECT)) db.prepare(sql).run(0, upTo);
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  return opts.rows / ((performance.now() - t) / 1000);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      sqlite: { type: 'string' },
      postgres: { type: 'string' },
      days: { type: 'string', default: '30' },
      content: { type: 'string', default: '0.3' },
      seed: { type: 'string', default: '1' },
      batch: { type: 'string', default: '5000' },
      prefix: { type: 'string', default: 'seed' },
    },
  });
  if (!values.sqlite === !values.postgres) throw new Error('give exactly one of --sqlite <file> or --postgres <url>');
  let store: LogStore;
  if (values.sqlite) store = await openSqliteStore(values.sqlite);
  else {
    const u = new URL(values.postgres!);
    store = await openPostgresStore({
      host: u.hostname,
      port: u.port || 5432,
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      db_name: u.pathname.slice(1),
      statement_timeout_ms: 600_000,
    });
  }
  const rows = Number(values.rows);
  let last = 0;
  const rps = await seedLogs(store, {
    rows,
    days: Number(values.days),
    content: Number(values.content),
    seed: Number(values.seed),
    batch: Number(values.batch),
    prefix: values.prefix,
    onProgress: (done) => {
      if (done - last >= 100_000 || done === rows) {
        last = done;
        process.stderr.write(`${done} records\n`);
      }
    },
  });
  await store.close();
  console.log(JSON.stringify({ store: store.kind, rows, records_per_second: Math.round(rps) }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) await main();
