// A proxy started with --kube-namespace following the configuration the operator renders, on a real
// kube-apiserver (test/helpers/kube.ts). The test writes the ConfigMaps and the Secret itself, as the
// operator would (server-side apply, parts and Secret first, the index last), and drives the proxy
// with the OpenAI SDK against the mock provider.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';
import { kubeList, renderConfig, type KubeObject, type RenderedConfig } from '../helpers/kube-render.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startPostgres } from '../helpers/postgres.ts';

const NS = 'skybridge';
const OPENAI_KEY = 'PROVIDER_SKYBRIDGE_OPENAI_KEY0';
const ANTHROPIC_KEY = 'PROVIDER_SKYBRIDGE_ANTHROPIC_KEY0';
const VK = 'VIRTUALKEY_TEAM_A_CHECKOUT_VALUE';
/** The brief: a change is served within 2 s of the write. */
const FOLLOW_MS = 2000;

let kube: KubeApiServer;
let mock: MockProvider;
let proxy: RunningGateway;
let client: OpenAI;
let api: Api;

interface DocOptions {
  anthropic?: boolean;
  /** Sent upstream as `x-config-rev`, so the mock shows which revision served a request. */
  rev: string;
}

function gatewayDocument(o: DocOptions): Record<string, unknown> {
  const provider = (format: string, key: string) => ({
    keys: [{ name: 'key0', value: `env.${key}`, weight: 1 }],
    network_config: { base_url: `${mock.url}/${format}`, max_retries: 0, extra_headers: { 'x-config-rev': o.rev } },
  });
  return {
    providers: { openai: provider('openai', OPENAI_KEY), ...(o.anthropic && { anthropic: provider('anthropic', ANTHROPIC_KEY) }) },
    governance: {
      virtual_keys: [{ id: 'checkout', name: 'checkout', value: `env.${VK}`, is_active: true, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }],
    },
  };
}

const SECRETS = { [OPENAI_KEY]: 'sk-openai-1', [ANTHROPIC_KEY]: 'sk-anthropic-1', [VK]: 'sk-bf-checkout-1' };

function render(o: DocOptions, secrets: Record<string, string> = SECRETS): RenderedConfig {
  return renderConfig(gatewayDocument(o), secrets, {
    namespace: NS,
    // Several parts, as a large configuration would have.
    partChars: 300,
    managed: { providers: ['openai', ...(o.anthropic ? ['anthropic'] : [])], virtual_keys: ['checkout'] },
    sources: {
      'providers/openai': `Provider ${NS}/openai`,
      ...(o.anthropic && { 'providers/anthropic': `Provider ${NS}/anthropic` }),
      'virtual_keys/checkout': 'VirtualKey team-a/checkout',
    },
  });
}

/** Server-side apply as the operator does it; objects are written in the order given. */
async function apply(objects: KubeObject[]): Promise<void> {
  const r = await kube.kubectl(['apply', '--server-side', '--field-manager=skybridge-operator', '--force-conflicts', '-f', '-'], kubeList(objects));
  assert.equal(r.code, 0, `kubectl apply failed: ${r.stderr}`);
}

/** Applies and returns when the write finished (the clock for "served within 2 s" starts there). */
async function applyTimed(objects: KubeObject[]): Promise<number> {
  await apply(objects);
  return Date.now();
}

async function metric(name: string): Promise<string[]> {
  const text = await (await fetch(`${proxy.url}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(name));
}

const reloadErrors = async (): Promise<number> => Number((await metric('skybridge_config_reload_errors_total'))[0]?.split(' ')[1] ?? 'NaN');
const configHash = async (): Promise<string> => ((await (await fetch(`${proxy.url}/health`)).json()) as { config_hash: string }).config_hash;

/**
 * A log line the proxy wrote before what the test just saw (an error counted in /metrics, a request
 * answered) can still be on its way: the proxy queues lines when its pipe is full (debug level here),
 * and this process reads the pipe apart from HTTP answers, 64 KiB at a time. Waited for, not read once.
 */
const logged = (check: () => void): Promise<void> => eventually(check, 5000);

const lastUpstream = (format: string) => [...mock.requests].reverse().find((r) => r.format === format && r.path.endsWith('/messages') === (format === 'anthropic'));

async function chat(model = 'openai/gpt-4o', headers: Record<string, string> = {}): Promise<string | null> {
  const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 }, { headers });
  return res.choices[0].message.content;
}

/** Waits for `check` to pass within `ms` of `since`, and says how long it took. */
async function followedWithin(since: number, ms: number, check: () => Promise<void>): Promise<number> {
  await eventually(check, ms - (Date.now() - since));
  const took = Date.now() - since;
  assert.ok(took <= ms, `followed after ${took} ms`);
  process.stdout.write(`# followed after ${took} ms\n`);
  return took;
}

before(
  async () => {
    [kube, mock] = await Promise.all([startKubeApiServer(), startMockProvider({ maxRecordedRequests: 5000 })]);
    const ns = await kube.kubectl(['create', 'namespace', NS]);
    assert.equal(ns.code, 0, ns.stderr);
    // No config.json: the app dir is empty and --kube-namespace is the source.
    proxy = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig }, args: ['--kube-namespace', NS] });
    client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    api = apiClient(proxy);
  },
  { timeout: 900_000 },
);

after(async () => {
  await proxy?.stop();
  await mock?.close();
  await kube?.stop();
});

describe('a proxy following Kubernetes', () => {
  test('starts empty, then serves a provider defined in Kubernetes within 2 s of the write', async () => {
    const health = (await (await fetch(`${proxy.url}/health`)).json()) as { providers: string[] };
    assert.deepEqual(health.providers, [], 'nothing rendered yet: no providers');
    assert.match(proxy.logs(), /no configuration rendered in namespace skybridge yet/);
    const notReady = await fetch(`${proxy.url}/ready`);
    assert.equal(notReady.status, 503, 'not ready: nothing to serve yet');
    assert.match(((await notReady.json()) as { reason: string }).reason, /no configuration rendered/);

    const written = await applyTimed(render({ rev: 'r1' }).all);
    await followedWithin(written, FOLLOW_MS, async () => {
      assert.equal(await chat(), 'Mock reply to: Hello');
    });
    assert.equal((await fetch(`${proxy.url}/ready`)).status, 200, 'ready once the rendering is served');
    const seen = lastUpstream('openai')!;
    assert.equal(seen.headers.authorization, 'Bearer sk-openai-1', 'the key comes from the Secret');
    assert.equal(seen.headers['x-config-rev'], 'r1');
    // The virtual key's value came from the Secret too.
    assert.equal(await chat('openai/gpt-4o', { 'x-bf-vk': 'sk-bf-checkout-1' }), 'Mock reply to: Hello');
    const unknown = await chat('openai/gpt-4o', { 'x-bf-vk': 'sk-bf-not-a-key' }).catch((e: unknown) => e);
    assert.ok(unknown instanceof OpenAI.APIError && unknown.status === 401, 'an unknown virtual key is refused');
  });

  test('an edit is followed within 2 s: a provider added in Kubernetes serves', async () => {
    await assert.rejects(chat('anthropic/claude-sonnet-4-5'), (e: unknown) => e instanceof OpenAI.APIError && e.status === 400);
    const written = await applyTimed(render({ anthropic: true, rev: 'r2' }).all);
    await followedWithin(written, FOLLOW_MS, async () => {
      assert.equal(await chat('anthropic/claude-sonnet-4-5'), 'Mock reply to: Hello');
    });
    const seen = lastUpstream('anthropic')!;
    assert.equal(seen.headers['x-api-key'], 'sk-anthropic-1');
    assert.equal(seen.headers['x-config-rev'], 'r2');
  });

  test('/api lists the objects from custom resources read-only and answers writes with 409 naming the CR', async () => {
    const providers = await api<{ providers: Array<Record<string, unknown>> }>('GET', '/api/providers');
    assert.equal(providers.status, 200);
    const openai = providers.body.providers.find((p) => p.name === 'openai')!;
    assert.equal(openai.managed_by, 'kubernetes');
    assert.equal(openai.source, `Provider ${NS}/openai`);
    const keys = openai.keys as Array<Record<string, unknown>>;
    assert.equal(keys[0].value, `env.${OPENAI_KEY}`, 'the reference is shown, never the Secret value');

    const vks = await api<{ virtual_keys: Array<Record<string, unknown>> }>('GET', '/api/governance/virtual-keys');
    assert.equal(vks.body.virtual_keys[0].managed_by, 'kubernetes');
    assert.equal(vks.body.virtual_keys[0].source, 'VirtualKey team-a/checkout');
    const vk = await api<{ virtual_key: Record<string, unknown> }>('GET', '/api/governance/virtual-keys/checkout');
    assert.equal(vk.body.virtual_key.source, 'VirtualKey team-a/checkout');

    const put = await api<ApiError>('PUT', '/api/providers/openai', { network_config: { max_retries: 3 } });
    assert.equal(put.status, 409);
    assert.match(put.body.error.message, /provider 'openai' is managed by Kubernetes \(Provider skybridge\/openai\)/);
    assert.match(put.body.error.message, /kubectl edit providers\.gateway\.skybridge\.dev openai -n skybridge/);

    const del = await api<ApiError>('DELETE', '/api/governance/virtual-keys/checkout');
    assert.equal(del.status, 409);
    assert.match(del.body.error.message, /VirtualKey team-a\/checkout/);

    const addKey = await api<ApiError>('POST', '/api/providers/openai/keys', { name: 'extra', value: 'sk-x' });
    assert.equal(addKey.status, 409);
    assert.match(addKey.body.error.message, /Provider skybridge\/openai/);

    // Not from a CR, but the operator renders the whole document: created there or nowhere.
    const create = await api<ApiError>('POST', '/api/governance/teams', { name: 'search' });
    assert.equal(create.status, 409);
    assert.match(create.body.error.message, /managed by Kubernetes and \/api is read-only.*kubectl/);

    // The dashboard is told so: read-only, naming what to edit.
    const info = await api<{ mode: string; read_only: boolean; read_only_reason?: string }>('GET', '/api/dashboard');
    assert.equal(info.body.mode, 'kubernetes');
    assert.equal(info.body.read_only, true);
    assert.match(info.body.read_only_reason ?? '', /custom resources.*kubectl/);

    // Nothing changed.
    assert.equal(await chat(), 'Mock reply to: Hello');
    assert.equal(lastUpstream('openai')!.headers['x-config-rev'], 'r2');
  });

  test('a partial write (a part that does not match the index) keeps the last good configuration and is counted', async () => {
    const hashBefore = await configHash();
    const errorsBefore = await reloadErrors();
    const next = render({ rev: 'r3-broken' });
    const index = JSON.parse(next.index.data['index.json']) as { checksums: Record<string, string> };
    index.checksums['skybridge-config-part-1'] = '0'.repeat(64);
    const broken: KubeObject = { ...next.index, data: { 'index.json': JSON.stringify(index) } };
    await apply([...next.parts, next.secret, broken]);

    // The error is reported once the write stays incomplete (the operator's normal multi-object
    // write is incomplete for a moment too, and is not an error).
    await eventually(async () => assert.equal(await reloadErrors(), errorsBefore + 1), 10_000);
    await logged(() => assert.match(proxy.logs(), /rendered configuration revision [0-9a-f]{64} is incomplete: part skybridge-config-part-1 does not match its checksum/));
    assert.equal(await configHash(), hashBefore, 'the loaded config hash did not change');
    assert.equal(await chat('anthropic/claude-sonnet-4-5'), 'Mock reply to: Hello', 'the last good config (with anthropic) still serves');
    assert.equal(lastUpstream('anthropic')!.headers['x-config-rev'], 'r2');

    // The operator finishes (or retries) the write: followed.
    const written = await applyTimed(render({ anthropic: true, rev: 'r4' }).all);
    await followedWithin(written, FOLLOW_MS, async () => {
      await chat();
      assert.equal(lastUpstream('openai')!.headers['x-config-rev'], 'r4');
    });
  });

  test('an invalid document is rejected, counted, and the last good one keeps serving', async () => {
    const errorsBefore = await reloadErrors();
    const hashBefore = await configHash();
    // The document refers to a Secret key the Secret does not have.
    const doc = gatewayDocument({ anthropic: true, rev: 'r5-invalid' });
    const bad = renderConfig(doc, { [OPENAI_KEY]: 'sk-openai-1', [VK]: 'sk-bf-checkout-1' }, { namespace: NS, partChars: 300 });
    await apply(bad.all);
    await eventually(async () => assert.equal(await reloadErrors(), errorsBefore + 1), 5000);
    await logged(() => assert.match(proxy.logs(), /rendered configuration revision [0-9a-f]{64} rejected; keeping the last good configuration: .*PROVIDER_SKYBRIDGE_ANTHROPIC_KEY0 is not set/));
    assert.equal(await configHash(), hashBefore);
    await chat();
    assert.equal(lastUpstream('openai')!.headers['x-config-rev'], 'r4');
    await apply(render({ anthropic: true, rev: 'r6' }).all);
    await eventually(async () => {
      await chat();
      assert.equal(lastUpstream('openai')!.headers['x-config-rev'], 'r6');
    }, FOLLOW_MS);
  });

  test("a document in which one resource names another's Secret entry is rejected; the value never goes upstream", async () => {
    const errorsBefore = await reloadErrors();
    const hashBefore = await configHash();
    // The openai Provider's extra header names the VirtualKey's entry, as an operator that let an
    // env. reference through would render it: the header would carry the key to the upstream.
    const doc = gatewayDocument({ anthropic: true, rev: 'r6-leak' }) as { providers: Record<string, { network_config: { extra_headers: Record<string, string> } }> };
    doc.providers.openai.network_config.extra_headers['x-leak'] = `env.${VK}`;
    const leak = renderConfig(doc, SECRETS, { namespace: NS, partChars: 300, managed: { providers: ['anthropic', 'openai'], virtual_keys: ['checkout'] }, sources: { 'providers/openai': `Provider ${NS}/openai`, 'providers/anthropic': `Provider ${NS}/anthropic`, 'virtual_keys/checkout': 'VirtualKey team-a/checkout' } });
    await apply(leak.all);
    await eventually(async () => assert.equal(await reloadErrors(), errorsBefore + 1), 30_000);
    await logged(() => assert.match(proxy.logs(), new RegExp(`rejected: the document references Secret entries outside their own resources: providers\\.openai\\.network_config\\.extra_headers\\.x-leak \\(Provider ${NS}/openai\\): env\\.${VK} is a Secret entry rendered for another resource`)));
    assert.equal(await configHash(), hashBefore);
    await chat();
    assert.equal(lastUpstream('openai')!.headers['x-config-rev'], 'r6');
    assert.ok(!mock.requests.some((r) => JSON.stringify(r.headers).includes(SECRETS[VK])), 'the virtual key went upstream');
    await apply(render({ anthropic: true, rev: 'r6' }).all);
  });

  test('Secret rotation: the new key is used upstream within 2 s, not before the index commits it', async () => {
    const rotated = render({ anthropic: true, rev: 'r6' }, { ...SECRETS, [OPENAI_KEY]: 'sk-openai-2' });
    // The operator writes the Secret first: until the index names its checksum, the old key stays.
    await apply([rotated.secret]);
    await new Promise((r) => setTimeout(r, 300));
    await chat();
    assert.equal(lastUpstream('openai')!.headers.authorization, 'Bearer sk-openai-1');

    const written = await applyTimed([rotated.index]);
    await followedWithin(written, FOLLOW_MS, async () => {
      await chat();
      assert.equal(lastUpstream('openai')!.headers.authorization, 'Bearer sk-openai-2');
    });
  });

  test('the proxy rides out an API server restart and follows a later change', { timeout: 300_000 }, async () => {
    const restartAt = Date.now();
    const restarted = kube.restart();
    // Served from the last good configuration all along, the API server away or not.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await chat(), 'Mock reply to: Hello');
    await restarted;
    process.stdout.write(`# API server restarted in ${Date.now() - restartAt} ms\n`);
    await logged(() => assert.match(proxy.logs(), /kubernetes watch failed; retrying/));
    assert.equal(await chat(), 'Mock reply to: Hello');
    const written = await applyTimed(render({ anthropic: true, rev: 'after-restart' }, { ...SECRETS, [OPENAI_KEY]: 'sk-openai-2' }).all);
    // Reconnecting waits out the watch's backoff (at most 1 s), then the change arrives: within 2 s.
    await eventually(async () => {
      await chat();
      assert.equal(lastUpstream('openai')!.headers['x-config-rev'], 'after-restart');
    }, 15_000);
    const followedMs = Date.now() - written;
    process.stdout.write(`# followed ${followedMs} ms after the write\n`);
    assert.ok(followedMs <= 2000, `changes flowed again ${followedMs} ms after the API server was back`);
  });

  test('100 configuration changes under steady load: no request fails', { timeout: 600_000 }, async () => {
    const secrets = { ...SECRETS, [OPENAI_KEY]: 'sk-openai-2' };
    const reloadsBefore = proxy.logs().match(/configuration reloaded from Kubernetes/g)?.length ?? 0;
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const worker = async (streaming: boolean) => {
      while (!stop) {
        try {
          if (streaming) {
            const stream = await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hello' }], stream: true });
            let text = '';
            for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
            assert.equal(text, 'Mock reply to: Hello');
          } else {
            assert.equal(await chat(), 'Mock reply to: Hello');
          }
          ok++;
        } catch (err) {
          failures.push(String(err));
        }
      }
    };
    const load = [worker(false), worker(false), worker(true), worker(true)];
    for (let i = 1; i <= 100; i++) {
      const r = render({ anthropic: true, rev: `load-${i}` }, secrets);
      // Only what changed, as server-side apply of unchanged objects would be a no-op anyway.
      await apply([...r.parts, r.index]);
    }
    await eventually(async () => {
      await chat();
      assert.equal(lastUpstream('openai')!.headers['x-config-rev'], 'load-100');
    }, FOLLOW_MS);
    stop = true;
    await Promise.all(load);
    assert.deepEqual(failures, []);
    assert.ok(ok >= 100, `requests served during the changes: ${ok}`);
    const reloads = (proxy.logs().match(/configuration reloaded from Kubernetes/g)?.length ?? 0) - reloadsBefore;
    assert.ok(reloads >= 90, `the proxy swapped configurations ${reloads} times`);
    process.stdout.write(`# ${ok} requests served, ${reloads} configurations swapped in\n`);
  });

  test('a proxy started after the configuration exists serves it from its first request', async () => {
    const second = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig }, args: ['--kube-namespace', NS] });
    try {
      const c = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const res = await c.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(res.choices[0].message.content, 'Mock reply to: Hi');
      assert.match(second.logs(), /"config":"kubernetes namespace skybridge"/);
    } finally {
      await second.stop();
    }
  });

  test('an edit written right after a proxy starts (while it rehearses reloads) is served, as the proxy running before serves it', async () => {
    const second = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig }, args: ['--kube-namespace', NS] });
    try {
      const written = await applyTimed(render({ anthropic: true, rev: 'r-after-start' }).all);
      const c = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      await followedWithin(written, FOLLOW_MS, async () => {
        await c.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] });
        assert.equal(lastUpstream('anthropic')?.headers['x-config-rev'], 'r-after-start');
      });
      await eventually(async () => assert.equal(await configHash(), ((await (await fetch(`${second.url}/health`)).json()) as { config_hash: string }).config_hash), FOLLOW_MS);
    } finally {
      await second.stop();
    }
  });

  test('a CachePolicy is live: the rendered semantic_cache plugin caches on the store the chart gives (SKYBRIDGE_VECTOR_STORE)', async () => {
    const doc = { ...gatewayDocument({ rev: 'r-cache', anthropic: true }), plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, default_cache_key: 'kube' } }] };
    const rendered = renderConfig(doc, SECRETS, { namespace: NS, managed: { providers: ['openai', 'anthropic'], virtual_keys: ['checkout'], plugins: ['semantic_cache'] }, sources: { 'plugins/semantic_cache': `CachePolicy ${NS}/cache` } });
    const cached = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig, SKYBRIDGE_VECTOR_STORE: JSON.stringify({ enabled: true, type: 'sqlite', config: { path: 'cache.db' } }) }, args: ['--kube-namespace', NS] });
    try {
      await apply(rendered.all);
      const c = new OpenAI({ baseURL: `${cached.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const ask = async () => (await c.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'cache me in kubernetes' }] })) as unknown as { extra_fields?: { cache_debug?: { cache_hit: boolean } } };
      await eventually(async () => {
        assert.equal((await ask()).extra_fields?.cache_debug?.cache_hit, false, 'the cache runs');
      }, FOLLOW_MS);
      const upstream = mock.requests.length;
      await eventually(async () => {
        assert.equal((await ask()).extra_fields?.cache_debug?.cache_hit, true, 'the second ask is a hit');
      }, 2000);
      assert.equal(mock.requests.length, upstream, 'a hit makes no upstream call');
    } finally {
      await cached.stop();
    }
  });

  test('request logs: two proxies given the store as the chart gives it (SKYBRIDGE_LOGS_STORE_*) share one PostgreSQL', async () => {
    const pg = await startPostgres();
    const env = {
      KUBECONFIG: kube.kubeconfig,
      SKYBRIDGE_LOGS_STORE_TYPE: 'postgres',
      SKYBRIDGE_LOGS_STORE_HOST: pg.host,
      SKYBRIDGE_LOGS_STORE_PORT: String(pg.port),
      SKYBRIDGE_LOGS_STORE_USER: pg.user,
      SKYBRIDGE_LOGS_STORE_DB_NAME: pg.database,
      SKYBRIDGE_LOGS_STORE_SSL_MODE: 'disable',
    };
    const [a, b] = await Promise.all([0, 1].map(() => startGateway(undefined, { env, args: ['--kube-namespace', NS] })));
    try {
      await apply(render({ rev: 'r-logs', anthropic: true }).all);
      const c = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      await eventually(async () => {
        await c.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'logged in kubernetes' }] });
      }, FOLLOW_MS);
      await eventually(async () => {
        const res = await fetch(`${b.url}/api/logs?limit=10`);
        assert.equal(res.status, 200);
        const body = (await res.json()) as { logs: { provider?: string; model?: string; status: string }[] };
        assert.ok(body.logs.some((l) => l.provider === 'openai' && l.model === 'gpt-4o' && l.status === 'success'), JSON.stringify(body.logs));
      }, 3000);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await pg.stop();
    }
  });
});
