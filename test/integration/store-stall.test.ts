// A store that stops answering without closing its connections (the server process frozen with
// SIGSTOP: its sockets stay open, so no error ever comes) must not hold the requests that touch it.
// One gateway, in this process, with each store on a real server of its own: the response cache
// on a redis-server, the counters (and the config store) on another, the request logs and async
// jobs on a PostgreSQL cluster. Each server is frozen in turn: a request answers within the store
// deadline plus a margin, as that store's outage rule says (a cache miss, a 503 naming Redis, a
// logged chat that is not held up, an async submit refused with a 503), and /health, /ready and the
// plugins' status say so while it lasts and turn green again after SIGCONT.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { startRedis, type RunningRedis } from '../helpers/redis.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { startPgvector, type RunningPgvector } from '../helpers/pgvector.ts';
import { mockProviders } from '../helpers/providers.ts';
import { patience } from '../helpers/patience.ts';

/** The store deadline the gateway runs with (SKYBRIDGE_STORE_TIMEOUT_MS). */
const DEADLINE_MS = 500;
const LIMITED = 'sk-bf-stall-limited-0123456789';
const grant = [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }];

let mock: MockProvider;
let cacheRedis: RunningRedis;
let counterRedis: RunningRedis;
let pgServer: RunningPostgres;
let g: InProcessGateway;
/** A second gateway, its response cache on PostgreSQL with pgvector. */
let pgvector: RunningPgvector;
let g2: InProcessGateway;
/** Every process frozen and not yet thawed: `after` wakes them whatever failed. */
const frozen = new Set<number>();

function freeze(pids: number[]): void {
  for (const pid of pids) {
    process.kill(pid, 'SIGSTOP');
    frozen.add(pid);
  }
}

function thaw(pids: number[]): void {
  for (const pid of pids) {
    frozen.delete(pid);
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone
    }
  }
}

before(async () => {
  [mock, cacheRedis, counterRedis, pgServer, pgvector] = await Promise.all([startMockProvider(), startRedis(), startRedis(), startPostgres(), startPgvector()]);
  g = await startGateway(
    {
      providers: mockProviders(mock.url),
      redis: { addr: counterRedis.addr },
      vector_store: { enabled: true, type: 'redis', config: { addr: cacheRedis.addr } },
      plugins: [
        { name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m' } },
        { name: 'logging', enabled: true },
      ],
      logs_store: { enabled: true, type: 'postgres', config: { host: pgServer.host, port: String(pgServer.port), user: pgServer.user, password: '', db_name: pgServer.database, ssl_mode: 'disable' } },
      governance: {
        rate_limits: [{ id: 'rl', request_max_limit: 1000, request_reset_duration: '1h' }],
        virtual_keys: [{ id: 'limited', name: 'limited', value: LIMITED, rate_limit_id: 'rl', provider_configs: grant }],
      },
    },
    { env: { SKYBRIDGE_STORE_TIMEOUT_MS: String(DEADLINE_MS) } },
  );
  g2 = await startGateway(
    {
      providers: mockProviders(mock.url),
      vector_store: { enabled: true, type: 'postgres', config: pgvector.storeConfig },
      plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m', vector_store_namespace: 'stall' } }],
    },
    { env: { SKYBRIDGE_STORE_TIMEOUT_MS: String(DEADLINE_MS) } },
  );
});

test('every store answers before anything is frozen, and /health lists each', async () => {
  await until('every store green at start', async () => {
    const h = await health();
    assert.deepEqual(h.dependencies, { redis: 'ok', cache_store: 'ok', logs_store: 'ok' }, JSON.stringify(h));
  });
});

after(async () => {
  // Wake whatever a failed test left frozen: a stopped server can neither answer nor be stopped.
  thaw([...frozen]);
  await Promise.allSettled([g?.stop(), g2?.stop()]);
  await Promise.allSettled([mock?.close(), cacheRedis?.stop(), counterRedis?.stop(), pgServer?.stop(), pgvector?.stop()]);
});

/** How long a request touching a frozen store may take: its deadline, and room for a loaded machine. */
const bound = () => DEADLINE_MS + patience(5000);

async function until(what: string, check: () => Promise<void>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + patience(ms);
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${patience(ms)} ms: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A request that must answer within `bound()`: a hang fails the test instead of holding it. */
async function timed(path: string, init: RequestInit = {}, base = g.url): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const limit = bound();
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(limit) });
  } catch (err) {
    throw new Error(`${init.method ?? 'GET'} ${path} did not answer within ${limit} ms: ${(err as Error).message}`);
  }
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, ms: Math.round(performance.now() - started) };
}

const chatBody = (content: string) => JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] });

function chat(content: string, headers: Record<string, string> = {}, base = g.url) {
  return timed('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: chatBody(content) }, base);
}

async function health(base = g.url): Promise<{ status: string; dependencies?: Record<string, string> }> {
  return (await timed('/health', {}, base)).body as { status: string; dependencies?: Record<string, string> };
}

async function plugin(name: string, base = g.url): Promise<{ status: string; logs: string[] }> {
  const r = await timed(`/api/plugins/${name}`, {}, base);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body as { status: { status: string; logs: string[] } }).status;
}

describe('the response cache on a frozen Redis', () => {
  test('a cached request answers as a miss within the deadline; health and the plugin say the store is silent, then green after SIGCONT', async () => {
    const key = { 'x-bf-cache-key': 'stall-cache' };
    const first = await chat('what does a frozen cache do?', key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    freeze([cacheRedis.pid]);
    try {
      // The first request meets the deadline; those after it are not sent to the silent store at all.
      for (const content of ['what does a frozen cache do?', 'and a second one?', 'and a third?']) {
        const r = await chat(content, key);
        assert.equal(r.status, 200, `answered from upstream as a miss: ${JSON.stringify(r.body)}`);
        const debug = (r.body.extra_fields as { cache_debug?: { cache_hit?: boolean } } | undefined)?.cache_debug;
        assert.notEqual(debug?.cache_hit, true, 'nothing can be read from a frozen store');
      }
      const h = await health();
      assert.equal(h.status, 'degraded');
      assert.equal(h.dependencies?.cache_store, 'unavailable');
      assert.equal(h.dependencies?.redis, 'ok', 'only the cache store is frozen');
      const status = await plugin('semantic_cache');
      assert.equal(status.status, 'error');
      assert.match(status.logs.join(' '), /cache store \(Redis 127\.0\.0\.1:\d+\) has not answered since .*lookups miss/);
      // A miss is not a reason to take the replica out of traffic.
      assert.equal((await timed('/ready')).status, 200);
    } finally {
      thaw([cacheRedis.pid]);
    }
    await until('the cache store green again', async () => {
      assert.equal((await health()).dependencies?.cache_store, 'ok');
      assert.equal((await plugin('semantic_cache')).status, 'active');
    });
    // And it caches again: an answer stored now is served from the store.
    const fresh = { 'x-bf-cache-key': 'stall-cache-after' };
    assert.equal((await chat('cached after the thaw', fresh)).status, 200);
    await until('a hit after the thaw', async () => {
      const r = await chat('cached after the thaw', fresh);
      assert.equal((r.body.extra_fields as { cache_debug?: { cache_hit?: boolean } } | undefined)?.cache_debug?.cache_hit, true, JSON.stringify(r.body));
    });
  });
});

describe('the response cache on a frozen PostgreSQL (pgvector)', () => {
  test('a cached request answers as a miss within the deadline; health and the plugin say so, then green after SIGCONT', async () => {
    const key = { 'x-bf-cache-key': 'stall-pg' };
    const hitOf = (r: { body: Record<string, unknown> }) => (r.body.extra_fields as { cache_debug?: { cache_hit?: boolean } } | undefined)?.cache_debug?.cache_hit;
    assert.equal((await chat('kept in PostgreSQL', key, g2.url)).status, 200);
    await until('a hit before the freeze', async () => assert.equal(hitOf(await chat('kept in PostgreSQL', key, g2.url)), true));
    const pids = pgvector.pids();
    freeze(pids);
    try {
      for (let i = 0; i < 3; i++) {
        const r = await chat('kept in PostgreSQL', key, g2.url);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.notEqual(hitOf(r), true, 'the entry is in a store that does not answer: a miss');
      }
      const h = await health(g2.url);
      assert.equal(h.dependencies?.cache_store, 'unavailable', JSON.stringify(h));
      const status = await plugin('semantic_cache', g2.url);
      assert.equal(status.status, 'error');
      assert.match(status.logs.join(' '), /cache store \(PostgreSQL 127\.0\.0\.1:\d+\) has not answered since/);
    } finally {
      thaw(pids);
    }
    await until('the pgvector cache store green again, and the entry served', async () => {
      assert.equal((await health(g2.url)).dependencies?.cache_store, 'ok');
      assert.equal(hitOf(await chat('kept in PostgreSQL', key, g2.url)), true);
    });
  });
});

describe('the counters on a frozen Redis', () => {
  test('a governed request is refused with a 503 naming Redis within the deadline; /ready is 503 until SIGCONT', async () => {
    const vk = { 'x-bf-vk': LIMITED };
    assert.equal((await chat('before the freeze', vk)).status, 200);
    freeze([counterRedis.pid]);
    try {
      for (const content of ['first while frozen', 'second while frozen']) {
        const r = await chat(content, vk);
        assert.equal(r.status, 503, JSON.stringify(r.body));
        assert.equal((r.body.error as { code?: string }).code, 'counter_store_unavailable');
        assert.match((r.body.error as { message: string }).message, /Redis does not answer/);
      }
      const h = await health();
      assert.equal(h.dependencies?.redis, 'unavailable');
      const ready = await timed('/ready');
      assert.equal(ready.status, 503, 'governance fails closed: this replica would refuse every governed request');
      assert.match(String(ready.body.reason), /counter store \(Redis 127\.0\.0\.1:\d+\) has not answered since/);
    } finally {
      thaw([counterRedis.pid]);
    }
    await until('the counter store answers again', async () => {
      assert.equal((await timed('/ready')).status, 200);
      assert.equal((await health()).dependencies?.redis, 'ok');
      assert.equal((await chat('after the thaw', vk)).status, 200);
    });
  });
});

describe('the logs and jobs store on a frozen PostgreSQL', () => {
  test('a logged chat is not held up, an async submit is refused with a 503 within the deadline; green after SIGCONT, and what was logged meanwhile is kept', async () => {
    const pids = pgServer.pids();
    assert.ok(pids.length > 1, 'the postmaster and its backends');
    freeze(pids);
    try {
      // Logging is after the answer: the request never waits for the store.
      const logged = await chat('logged while the store is frozen');
      assert.equal(logged.status, 200, JSON.stringify(logged.body));
      for (let i = 0; i < 2; i++) {
        const r = await timed('/v1/async/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(`async ${i} while frozen`) });
        assert.equal(r.status, 503, JSON.stringify(r.body));
        assert.equal((r.body.error as { code?: string }).code, 'async_store_unavailable');
        assert.match((r.body.error as { message: string }).message, /does not answer/);
      }
      const h = await health();
      assert.equal(h.dependencies?.logs_store, 'unavailable');
      // The management API's search is refused, not hung or a 500.
      const search = await timed('/api/logs');
      assert.equal(search.status, 503, JSON.stringify(search.body));
      assert.equal((search.body.error as { code?: string }).code, 'store_unavailable');
      const status = await plugin('logging');
      assert.equal(status.status, 'error');
      assert.match(status.logs.join(' '), /logs store \(PostgreSQL 127\.0\.0\.1:\d+\) has not answered since/);
      // Records made now wait in the writer's queue.
      assert.equal((await chat('logged after the stall was seen')).status, 200);
      assert.equal((await timed('/ready')).status, 200, 'the logs store does not decide readiness');
    } finally {
      thaw(pids);
    }
    await until('the logs store green again', async () => {
      assert.equal((await health()).dependencies?.logs_store, 'ok');
      assert.equal((await plugin('logging')).status, 'active');
    });
    const submitted = await timed('/v1/async/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody('async after the thaw') });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    await until('the record held during the stall is written', async () => {
      const r = await timed(`/api/logs?content_search=${encodeURIComponent('logged after the stall was seen')}`);
      assert.equal((r.body.logs as unknown[] | undefined)?.length, 1, JSON.stringify(r.body));
    });
  });
});

test('a SKYBRIDGE_STORE_TIMEOUT_MS that is not a whole number of milliseconds in range stops the start, naming it', async () => {
  await assert.rejects(startGateway({ providers: mockProviders(mock.url) }, { env: { SKYBRIDGE_STORE_TIMEOUT_MS: '2s' } }), /SKYBRIDGE_STORE_TIMEOUT_MS must be a whole number of milliseconds from 50 to 60000, got '2s'/);
});
