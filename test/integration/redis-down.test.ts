// Redis is a dependency the gateway survives: unreachable at start-up it still listens, says so on
// /health, refuses what needs the counters (503 naming Redis, promptly) and serves the rest; when a
// real redis-server comes up on the configured port it recovers by itself and the configuration
// document is seeded into Redis. Losing Redis at run time, or Redis hanging, neither stalls nor
// stops the process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { redisCommand, startRedis, type RunningRedis } from '../helpers/redis.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

let mock: MockProvider;
let redis: RunningRedis;
const gateways: RunningGateway[] = [];

before(async () => {
  mock = await startMockProvider();
  // A port known to be free, then nothing listening on it: Redis is "down" until restart().
  redis = await startRedis();
  await redis.stop();
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await mock.close();
  await redis.stop();
});

const LIMITED = 'sk-bf-limited-0123456789';
const FREE = 'sk-bf-free-0123456789';
const grant = [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }];

function config(extra: Record<string, unknown> = {}) {
  return {
    providers: mockProviders(mock.url),
    client: { enforce_auth_on_inference: true },
    governance: {
      rate_limits: [{ id: 'rl', request_max_limit: 1000, request_reset_duration: '1h' }],
      virtual_keys: [
        { id: 'limited', name: 'limited', value: LIMITED, rate_limit_id: 'rl', provider_configs: grant },
        { id: 'free', name: 'free', value: FREE, provider_configs: grant },
      ],
    },
    ...extra,
  };
}

async function gateway(cfg: unknown, env: NodeJS.ProcessEnv = {}): Promise<RunningGateway> {
  const g = await startGateway(cfg, { env });
  gateways.push(g);
  return g;
}

const chat = (g: RunningGateway, key: string) =>
  fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': key },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });

async function health(g: RunningGateway): Promise<{ status: string; dependencies?: Record<string, string> }> {
  const res = await fetch(`${g.url}/health`);
  assert.equal(res.status, 200);
  return (await res.json()) as { status: string; dependencies?: Record<string, string> };
}

async function timed(p: Promise<Response>): Promise<{ res: Response; ms: number; body: { error?: { message: string; code?: string } } }> {
  const t0 = performance.now();
  const res = await p;
  const body = (await res.json()) as { error?: { message: string; code?: string } };
  return { res, ms: performance.now() - t0, body };
}

test('Redis down at start: the gateway listens, /health names Redis, governed requests are 503, it recovers when Redis comes up', async () => {
  const started = Date.now();
  const g = await gateway(config({ redis: { addr: redis.addr } }));
  assert.ok(Date.now() - started < 10_000, 'started without waiting for Redis');

  const h = await health(g);
  assert.equal(h.status, 'degraded');
  assert.deepEqual(h.dependencies, { redis: 'unavailable' });

  // Needs the counters: refused, promptly, naming Redis, with Retry-After.
  const limited = await timed(chat(g, LIMITED));
  assert.equal(limited.res.status, 503);
  assert.match(limited.body.error!.message, /Redis/);
  assert.equal(limited.body.error!.code, 'counter_store_unavailable');
  assert.ok(limited.res.headers.get('retry-after'));
  assert.ok(limited.ms < 2000, `503 took ${limited.ms} ms`);
  // No limit applies: served from the start-up configuration.
  assert.equal((await chat(g, FREE)).status, 200);
  // Configuration changes cannot be stored: 503 naming Redis, nothing half-applied.
  const write = await apiClient(g)('POST', '/api/governance/virtual-keys', { name: 'new', value: 'sk-bf-new-0123456789', provider_configs: grant });
  assert.equal(write.status, 503, write.text);
  assert.match(write.text, /Redis/);

  await redis.restart();
  await eventually(async () => assert.equal((await health(g)).status, 'ok'), 10_000);
  assert.deepEqual((await health(g)).dependencies, { redis: 'ok' });
  await eventually(async () => assert.equal((await chat(g, LIMITED)).status, 200), 5000);
  // The start-up document was seeded into Redis once it answered, and writes work again.
  await eventually(async () => assert.equal(await redisCommand(redis.port, 'EXISTS skybridge:config'), ':1'), 5000);
  const later = await apiClient(g)('POST', '/api/governance/virtual-keys', { name: 'new', value: 'sk-bf-new-0123456789', provider_configs: grant });
  assert.equal(later.status, 201, later.text);
  assert.equal((await chat(g, 'sk-bf-new-0123456789')).status, 200);
  assert.equal(g.process.exitCode, null);
});

test('Redis lost at run time, or hanging: 503 within a bounded time, the process stays up, and recovers', async () => {
  const g = await gateway(config({ redis: { addr: redis.addr } }));
  await eventually(async () => assert.equal((await chat(g, LIMITED)).status, 200), 5000);

  await redis.stop();
  const lost = await timed(chat(g, LIMITED));
  assert.equal(lost.res.status, 503);
  assert.match(lost.body.error!.message, /Redis/);
  assert.ok(lost.ms < 2000, `503 took ${lost.ms} ms`);
  assert.equal((await chat(g, FREE)).status, 200);
  await eventually(async () => assert.equal((await health(g)).dependencies?.redis, 'unavailable'), 3000);

  await redis.restart();
  await eventually(async () => assert.equal((await chat(g, LIMITED)).status, 200), 10_000);

  // A Redis that accepts but never answers: commands time out instead of holding requests.
  process.kill(redis.pid, 'SIGSTOP');
  try {
    const hung = await timed(chat(g, LIMITED));
    assert.equal(hung.res.status, 503);
    assert.ok(hung.ms < 3000, `503 took ${hung.ms} ms`);
    const h0 = performance.now();
    await health(g);
    assert.ok(performance.now() - h0 < 500, '/health stays responsive');
  } finally {
    process.kill(redis.pid, 'SIGCONT');
  }
  await eventually(async () => assert.equal((await chat(g, LIMITED)).status, 200), 10_000);
  assert.equal(g.process.exitCode, null);
});

test('SKYBRIDGE_REDIS_ADDR pointing at nothing does not stop the start either', async () => {
  await redis.stop();
  const g = await gateway(config(), { SKYBRIDGE_REDIS_ADDR: redis.addr });
  assert.equal((await health(g)).dependencies?.redis, 'unavailable');
  assert.equal((await chat(g, LIMITED)).status, 503);
  assert.equal((await chat(g, FREE)).status, 200);
});
