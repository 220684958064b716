// Request logging end to end: gateways (in process) with client.enable_logging (SQLite in the app
// directory), the logging plugin named in plugins[] (content off), and two gateways sharing a real
// PostgreSQL. Each request a user makes (a chat, a stream, a refusal, an upstream error, a
// passthrough call) shows up in /api/logs within 2 s with what happened, and no credential is ever
// stored: neither the provider key nor the virtual key's value is in the records or the DB file.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually, patience } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';

// Answers are read field by field below; their types are what the assertions check.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Entry = Record<string, any>;

const PROVIDER_KEY = 'sk-openai-test';
const VK_VALUE = 'sk-bf-log-vk-0123456789';
const RL_VK_VALUE = 'sk-bf-rl-vk-0123456789';
/** Every token costs a cent: a record's cost is its total tokens / 100. */
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];

let mock: MockProvider;
const gateways: InProcessGateway[] = [];

before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await mock.close();
});

const grant = { provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['*'], weight: 1 };

function config(extra: Record<string, unknown>): Record<string, unknown> {
  return {
    providers: mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN } }),
    governance: {
      rate_limits: [{ id: 'one-a-day', request_max_limit: 1, request_reset_duration: '1d' }],
      virtual_keys: [
        { id: 'log-vk', name: 'log-vk', value: VK_VALUE, provider_configs: [grant] },
        { id: 'rl-vk', name: 'rl-vk', value: RL_VK_VALUE, rate_limit_id: 'one-a-day', provider_configs: [grant] },
      ],
    },
    ...extra,
    client: { enforce_auth_on_inference: true, ...(extra.client as object) },
  };
}

async function gateway(cfg: unknown): Promise<InProcessGateway> {
  const g = await startGateway(cfg);
  gateways.push(g);
  return g;
}

const client = (g: InProcessGateway, key?: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: key ?? 'none', maxRetries: 0, ...(key && { defaultHeaders: { 'x-bf-vk': key } }) });

async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err.status ?? 0;
    throw err;
  }
}

async function getJson(g: InProcessGateway, path: string): Promise<Entry> {
  const res = await fetch(g.url + path);
  const body = (await res.json()) as Entry;
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

const logsOf = async (g: InProcessGateway): Promise<Entry[]> => (await getJson(g, '/api/logs?limit=100')).logs as Entry[];

/** Waits (at most 2 s) until `find` picks a record out of /api/logs. */
async function logged(g: InProcessGateway, what: string, find: (e: Entry) => boolean): Promise<Entry> {
  let hit: Entry | undefined;
  await eventually(async () => {
    hit = (await logsOf(g)).find(find);
    assert.ok(hit, `no log record for ${what} yet`);
  }, 2000);
  return hit!;
}

describe('request logs on SQLite (client.enable_logging)', () => {
  let g: InProcessGateway;
  before(async () => {
    g = await gateway(config({ client: { enable_logging: true } }));
  });

  test('a chat is logged with provider, model, tokens, cost, VK and key id, and its content', async () => {
    const started = Date.now();
    const answer = await client(g, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'logged chat marker' }] });
    const e = await logged(g, 'the chat', (x) => x.object === 'chat.completion' && !x.stream && x.status === 'success');
    // Within 2.5 s on an idle machine; a loaded one stretches it (the first chat also compiles its request schema).
    assert.ok(Date.now() - started < patience(2500));
    assert.equal(e.provider, 'openai');
    assert.equal(e.model, 'gpt-4o');
    assert.equal(e.requested_model, 'openai/gpt-4o');
    assert.equal(e.virtual_key_id, 'log-vk');
    assert.equal(e.selected_key_name, 'openai-key');
    assert.match(e.selected_key_id, /^[0-9a-f-]{36}$/);
    assert.equal(e.token_usage.prompt_tokens, answer.usage!.prompt_tokens);
    assert.equal(e.token_usage.completion_tokens, answer.usage!.completion_tokens);
    assert.ok(Math.abs(e.cost - answer.usage!.total_tokens / 100) < 1e-9, `cost ${e.cost}`);
    assert.ok(e.latency >= 0);
    const full = await getJson(g, `/api/logs/${e.id}`);
    assert.match(full.raw_request, /logged chat marker/);
    assert.match(full.raw_response, /Mock reply to: logged chat marker/);
  });

  test('a streamed chat is logged with stream, usage, TTFT and the streamed text', async () => {
    const stream = await client(g, VK_VALUE).chat.completions.create({
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'streamed marker words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    const e = await logged(g, 'the stream', (x) => x.stream === true);
    assert.equal(e.status, 'success');
    assert.equal(e.provider, 'openai');
    assert.equal(e.virtual_key_id, 'log-vk');
    assert.ok(e.token_usage.completion_tokens > 0);
    assert.ok(typeof e.ttft === 'number' && e.ttft <= e.latency, `ttft ${e.ttft} latency ${e.latency}`);
    const full = await getJson(g, `/api/logs/${e.id}`);
    assert.equal(full.raw_response, text);
  });

  test('refusals (401, 429) and an upstream error are logged as errors', async () => {
    assert.equal(await statusOf(client(g).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'no key' }] })), 401);
    const rl = client(g, RL_VK_VALUE);
    assert.equal(await statusOf(rl.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'first' }] })), 200);
    assert.equal(await statusOf(rl.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'second' }] })), 429);
    mock.inject({ format: 'openai', status: 500, message: 'upstream exploded' });
    const failed = await statusOf(client(g, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }));
    mock.reset();
    assert.ok(failed >= 500, `status ${failed}`);

    const unauthorized = await logged(g, 'the 401', (x) => x.status === 'error' && x.error_details?.status === 401);
    assert.equal(unauthorized.virtual_key_id, undefined);
    assert.match(unauthorized.error_details.message, /virtual key is required/);
    const limited = await logged(g, 'the 429', (x) => x.error_details?.status === 429);
    assert.equal(limited.virtual_key_id, 'rl-vk');
    assert.match(limited.error_details.message, /one-a-day/);
    const upstream = await logged(g, 'the upstream error', (x) => x.error_details?.status === failed);
    assert.equal(upstream.provider, 'openai');
    assert.equal(upstream.model, 'gpt-4o-mini');
    assert.match(upstream.error_details.message, /upstream exploded/);
    assert.equal(upstream.virtual_key_id, 'log-vk');
  });

  test('a passthrough call is logged', async () => {
    const res = await fetch(`${g.url}/openai_passthrough/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-bf-vk': VK_VALUE, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'passthrough marker' }] }),
    });
    const answer = (await res.json()) as Entry;
    assert.equal(res.status, 200, JSON.stringify(answer));
    const e = await logged(g, 'the passthrough call', (x) => x.object === 'passthrough');
    assert.equal(e.status, 'success');
    assert.equal(e.provider, 'openai');
    assert.equal(e.virtual_key_id, 'log-vk');
    assert.equal(e.selected_key_name, 'openai-key');
    assert.equal(e.model, 'gpt-4o');
    assert.equal(e.token_usage.prompt_tokens, answer.usage.prompt_tokens);
  });

  test('no credential is in the records or the database file; nothing was dropped', async () => {
    const listed = JSON.stringify(await logsOf(g));
    const details = await Promise.all((await logsOf(g)).map((e) => getJson(g, `/api/logs/${e.id}`)));
    for (const text of [listed, JSON.stringify(details)]) {
      for (const secret of [PROVIDER_KEY, VK_VALUE, RL_VK_VALUE]) assert.ok(!text.includes(secret), `${secret} is in /api/logs`);
    }
    const db = join(g.appDir, 'logs.db');
    assert.ok(existsSync(db));
    const bytes = Buffer.concat([db, `${db}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    assert.ok(bytes.includes('logged chat marker'), 'content is in the file (so the search below is meaningful)');
    for (const secret of [PROVIDER_KEY, VK_VALUE, RL_VK_VALUE]) assert.ok(!bytes.includes(secret), `${secret} is in the database file`);

    assert.deepEqual(await getJson(g, '/api/logs/dropped'), { dropped_requests: 0 });
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    assert.match(metrics, /^skybridge_logs_dropped_total 0$/m);
  });
});

describe('request logs with --workers 2 (two processes writing one SQLite file)', () => {
  test('every request of both workers is stored', async () => {
    const g = await startGateway(config({ client: { enable_logging: true } }), { args: ['--workers', '2'] });
    gateways.push(g);
    const c = client(g, VK_VALUE);
    // New connections, so both workers get some.
    await Promise.all(Array.from({ length: 20 }, (_, i) => c.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: `worker marker ${i}` }] }, { headers: { connection: 'close' } })));
    await eventually(async () => assert.equal((await logsOf(g)).length, 20), 3000);
    assert.deepEqual(await getJson(g, '/api/logs/dropped'), { dropped_requests: 0 });
  });
});

describe('the logging plugin named in plugins[]', () => {
  test('runs with its own config (content off), shows active, and logs without content', async () => {
    const g = await gateway(
      config({
        logs_store: { enabled: true, type: 'sqlite', config: { path: 'plugin-logs.db' } },
        plugins: [{ name: 'logging', enabled: true, config: { disable_content_logging: true } }],
      }),
    );
    const plugins = await getJson(g, '/api/plugins');
    assert.equal(plugins.plugins[0].status.status, 'active');
    await client(g, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'private words' }] });
    const e = await logged(g, 'the chat', (x) => x.status === 'success');
    assert.equal(e.virtual_key_id, 'log-vk');
    const full = await getJson(g, `/api/logs/${e.id}`);
    assert.equal(full.raw_request, undefined);
    assert.equal(full.raw_response, undefined);
    assert.ok(existsSync(join(g.appDir, 'plugin-logs.db')));
    assert.ok(!existsSync(join(g.appDir, 'logs.db')));

    // config.json's plugin is read-only through /api (409 naming the file); disabled live by editing the file: no more records.
    const off = await fetch(`${g.url}/api/plugins/logging`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ enabled: false }) });
    assert.equal(off.status, 409);
    g.writeConfig(
      config({
        logs_store: { enabled: true, type: 'sqlite', config: { path: 'plugin-logs.db' } },
        plugins: [{ name: 'logging', enabled: false, config: { disable_content_logging: true } }],
      }),
    );
    await eventually(async () => assert.equal((await getJson(g, '/api/plugins')).plugins[0].enabled, false), 20_000);
    const before = (await logsOf(g)).length;
    await client(g, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'not logged' }] });
    await new Promise((r) => setTimeout(r, 600));
    assert.equal((await logsOf(g)).length, before);
  });

  test('client.logging_headers and x-bf-lh-* headers land in the metadata; credential headers never do', async () => {
    const g = await gateway(config({ client: { enable_logging: true, logging_headers: ['X-Tenant', 'x-bf-vk', 'Authorization'] } }));
    const headers = { 'x-tenant': 'acme', 'x-bf-lh-env': 'staging', 'x-other': 'not kept' };
    await client(g, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'with metadata' }] }, { headers });
    const e = await logged(g, 'the chat', (x) => x.status === 'success');
    assert.deepEqual(e.metadata, { 'x-tenant': 'acme', env: 'staging' });
    assert.ok(!JSON.stringify(e).includes(VK_VALUE));
  });

  test('client.disable_content_logging leaves content out', async () => {
    const g = await gateway(config({ client: { enable_logging: true, disable_content_logging: true } }));
    await client(g, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'secret prompt words' }] });
    const e = await logged(g, 'the chat', (x) => x.status === 'success');
    const full = await getJson(g, `/api/logs/${e.id}`);
    assert.equal(full.raw_request, undefined);
    assert.equal(full.raw_response, undefined);
  });

  test('without enable_logging nothing is logged and /api/logs says so', async () => {
    const g = await gateway(config({}));
    const res = await fetch(`${g.url}/api/logs`);
    assert.equal(res.status, 404);
    assert.ok(!existsSync(join(g.appDir, 'logs.db')));
    // A logging plugin added live has no store to write to on this process: it says so, never `active`.
    const added = await fetch(`${g.url}/api/plugins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'logging', enabled: true }) });
    assert.equal(added.status, 201);
    const { plugin } = (await added.json()) as { plugin: { status: { status: string; logs: string[] } } };
    assert.equal(plugin.status.status, 'error');
    assert.match(plugin.status.logs[0], /no request-log store is open/);
  });
});

describe('request logs on a shared PostgreSQL', () => {
  let pg: RunningPostgres | undefined;
  before(async () => {
    pg = await startPostgres();
  });
  after(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.stop()));
    await pg?.stop();
  });

  test('a request on one gateway is visible in /api/logs on the other within 2 s; with the database gone, requests still answer and lost records are counted', async () => {
    if (!pg) throw new Error('no PostgreSQL');
    const logsStore = { enabled: true, type: 'postgres', config: { host: pg.host, port: String(pg.port), user: pg.user, password: '', db_name: pg.database, ssl_mode: 'disable' } };
    const [g1, g2] = await Promise.all([gateway(config({ logs_store: logsStore })), gateway(config({ logs_store: logsStore }))]);
    const t0 = Date.now();
    await client(g1, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'replica marker' }] });
    const e = await logged(g2, 'the request made on the other gateway', (x) => x.status === 'success' && x.virtual_key_id === 'log-vk');
    assert.ok(Date.now() - t0 < 2500);
    assert.equal(e.provider, 'openai');
    assert.equal(e.model, 'gpt-4o');
    const full = await getJson(g2, `/api/logs/${e.id}`);
    assert.match(full.raw_request, /replica marker/);
    assert.ok(!JSON.stringify(full).includes(VK_VALUE) && !JSON.stringify(full).includes(PROVIDER_KEY));

    await pg.stop();
    pg = undefined;
    for (let i = 0; i < 3; i++) await client(g1, VK_VALUE).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: `lost ${i}` }] });
    await eventually(async () => assert.ok((await getJson(g1, '/api/logs/dropped')).dropped_requests >= 3), 10_000);
    const dropped = (await getJson(g1, '/api/logs/dropped')).dropped_requests as number;
    const metrics = await (await fetch(`${g1.url}/metrics`)).text();
    assert.equal(Number(/^skybridge_logs_dropped_total (\d+)$/m.exec(metrics)?.[1]), dropped);
  });
});
