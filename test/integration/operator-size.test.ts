// Size ceilings end to end on a real kube-apiserver, with the chart's RBAC for the operator and a
// proxy: a Provider whose one Secret value cannot fit in a rendered Secret is refused alone
// (Accepted=False, TooLarge, naming size and limit) while the others are served; secret values over
// one Secret's capacity are rendered into several Secret shards, and a proxy serves keys from them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, fetch } from 'undici';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil, kubeconfigFor as kubeconfigForUser } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { operatorRbac, proxyRbac } from '../helpers/kube-rbac.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

const NS = 'skybridge';
const GROUP_PATH = `/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}`;
const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
/** Keys per bulk Provider and bytes per key: two Secrets of ~600 KiB, more than one shard (768 KiB) holds. */
const BULK_KEYS = 75;
const KEY_BYTES = 8 * 1024;

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;
let mock: MockProvider;
let operator: ChildProcess | undefined;
let operatorOut = '';
let proxy: RunningGateway;

interface Cr {
  metadata: { name: string; generation?: number };
  status?: { observedGeneration?: number; conditions?: { type: string; status: string; reason: string; message: string }[] };
}

const api = <T = Cr>(path: string): Promise<T | undefined> => kubeGet<T>(kube, agent, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);
const apply = (obj: unknown) => kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify(obj));
const accepted = (o: Cr | undefined) => o?.status?.conditions?.find((c) => c.type === 'Accepted');

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> =>
  waitUntil(what, fn, {
    timeoutMs,
    everyMs: 200,
    context: () => {
      const tail = (s: string) => s.split('\n').slice(-25).join('\n');
      return `--- operator ---\n${tail(operatorOut)}\n--- proxy ---\n${tail(proxy?.logs() ?? '')}`;
    },
  });

const kubeconfigFor = (user: string): string => kubeconfigForUser(kube, user);

const bulkValue = (tag: string, n: number) => `sk-${tag}-${String(n).padStart(3, '0')}-`.padEnd(KEY_BYTES, 'x');
const provider = (name: string, keys: { name: string; secret: string; key: string }[]) => ({
  apiVersion: 'gateway.skybridge.dev/v1alpha1',
  kind: 'Provider',
  metadata: { name, namespace: NS },
  spec: {
    keys: keys.map((k) => ({ name: k.name, weight: 1, valueFrom: { secretKeyRef: { name: k.secret, key: k.key } } })),
    network_config: { base_url: `${mock.url}/openai`, max_retries: 0 },
    ...(name === 'openai' ? {} : { custom_provider_config: { base_provider_type: 'openai' } }),
  },
});
const bulkProvider = (tag: string) => provider(`bulk-${tag}`, Array.from({ length: BULK_KEYS }, (_, n) => ({ name: `k${n}`, secret: `bulk-${tag}`, key: `k${n}` })));

async function chat(model: string): Promise<{ status: number; auth?: string }> {
  const before = mock.requests.length;
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': 'sk-bf-size-team-0001' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await res.text();
  const seen = mock.requests.slice(before).at(-1);
  return { status: res.status, auth: seen?.headers.authorization as string | undefined };
}

before(async () => {
  [kube, mock] = await Promise.all([startKubeApiServer({ users: [{ name: 'skybridge-operator' }, { name: 'skybridge-proxy' }] }), startMockProvider({ maxRecordedRequests: 1000 })]);
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], `${proxyRbac(NS)}\n---${operatorRbac(NS)}`);
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'small', namespace: NS }, stringData: { openai: 'sk-openai-small-1', vk: 'sk-bf-size-team-0001' } });
  for (const tag of ['a', 'b']) {
    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `bulk-${tag}`, namespace: NS }, stringData: Object.fromEntries(Array.from({ length: BULK_KEYS }, (_, n) => [`k${n}`, bulkValue(tag, n)])) });
  }
  // One value of 800 KiB: a valid Secret (under 1 MiB), but more than one rendered Secret shard holds.
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'huge', namespace: NS }, stringData: { key: `sk-huge-`.padEnd(800 * 1024, 'y') } });
  operator = spawn(NODE, [MAIN, '--namespace', NS, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--lease-duration', '3', '--identity', 'op', '--resync-period', '30', '--ready-when', 'rendered'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfigFor('skybridge-operator'), HOME: kube.stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  operator.stdout!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
  operator.stderr!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
  proxy = await startGateway(undefined, { env: { KUBECONFIG: kubeconfigFor('skybridge-proxy'), HOME: kube.stateDir }, args: ['--kube-namespace', NS] });
}, { timeout: 15 * 60_000 });

after(async () => {
  await proxy?.stop();
  if (operator && operator.exitCode === null) {
    const exited = once(operator, 'exit');
    operator.kill('SIGKILL');
    await exited;
  }
  await mock?.close();
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

test('a Provider whose Secret value cannot fit is TooLarge alone; the others are served', { timeout: 3 * 60_000 }, async () => {
  await apply(provider('openai', [{ name: 'main', secret: 'small', key: 'openai' }]));
  await apply(provider('huge', [{ name: 'main', secret: 'huge', key: 'key' }]));
  await apply({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'VirtualKey',
    metadata: { name: 'team', namespace: NS },
    spec: { valueFrom: { secretKeyRef: { name: 'small', key: 'vk' } }, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] },
  });
  const huge = await waitFor('the huge Provider refused', async () => {
    const o = await api(`${GROUP_PATH}/providers/huge`);
    return accepted(o)?.status === 'False' ? o : undefined;
  });
  assert.equal(accepted(huge)?.reason, 'TooLarge');
  assert.match(accepted(huge)?.message ?? '', / is 80\d KiB; one value can be at most 768 KiB \(one rendered Secret shard\)/);
  // Statuses are written concurrently: openai's can land after huge's, so it is waited for too.
  const openai = await waitFor('the openai Provider judged', async () => {
    const o = await api(`${GROUP_PATH}/providers/openai`);
    return accepted(o) ? o : undefined;
  });
  assert.equal(accepted(openai)?.reason, 'Valid');
  // The rest is served by the proxy; the refused one is not there at all.
  const served = await waitFor('openai served', async () => {
    const r = await chat('openai/gpt-4o');
    return r.status === 200 ? r : undefined;
  });
  assert.equal(served.auth, 'Bearer sk-openai-small-1');
  const providers = (await (await fetch(`${proxy.url}/api/providers`)).text());
  assert.ok(!providers.includes('"huge"'), providers.slice(0, 300));
  const secret = await api<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/secrets/skybridge-secrets`);
  assert.ok(!Object.keys(secret?.data ?? {}).some((k) => k.includes('HUGE')));
});

test('secret values over one Secret are rendered into several shards, and a proxy serves keys from each', { timeout: 3 * 60_000 }, async () => {
  await apply(bulkProvider('a'));
  await apply(bulkProvider('b'));
  await apply({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'VirtualKey',
    metadata: { name: 'team', namespace: NS },
    spec: {
      valueFrom: { secretKeyRef: { name: 'small', key: 'vk' } },
      provider_configs: ['openai', 'bulk-a', 'bulk-b'].map((provider) => ({ provider, allowed_models: ['*'], key_ids: ['*'] })),
    },
  });
  const index = await waitFor('an index naming several Secret shards', async () => {
    const cm = await api<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/configmaps/skybridge-config-index`);
    const doc = cm ? (JSON.parse(cm.data['index.json']) as { secrets?: string[]; managed: { providers?: string[] } }) : undefined;
    return doc?.managed.providers?.includes('bulk-b') && (doc.secrets?.length ?? 0) > 1 ? doc : undefined;
  });
  assert.deepEqual(index.secrets, ['skybridge-secrets', 'skybridge-secrets-1']);
  let total = 0;
  for (const name of index.secrets ?? []) {
    const s = await api<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/secrets/${name}`);
    const bytes = Object.entries(s?.data ?? {}).reduce((n, [k, v]) => n + k.length + Buffer.from(v, 'base64').length, 0);
    assert.ok(bytes <= 768 * 1024, `${name}: ${bytes} bytes`);
    total += bytes;
  }
  assert.ok(total > 1024 * 1024, `secret values in total: ${total} bytes`);
  process.stdout.write(`# ${total} bytes of secret values in ${index.secrets?.length} Secret shards\n`);
  for (const tag of ['a', 'b']) {
    const r = await waitFor(`bulk-${tag} served`, async () => {
      const x = await chat(`bulk-${tag}/gpt-4o`);
      return x.status === 200 ? x : undefined;
    });
    assert.match(r.auth ?? '', new RegExp(`^Bearer sk-${tag}-\\d{3}-x+$`));
    assert.equal(r.auth?.length, 'Bearer '.length + KEY_BYTES);
  }
  assert.equal((await chat('openai/gpt-4o')).auth, 'Bearer sk-openai-small-1');
  // Removing one bulk Provider shrinks the render back to one shard; the stale one is deleted.
  await kubectl(['delete', '-n', NS, 'provider', 'bulk-b']);
  await waitFor('the second shard deleted', async () => (await api(`/api/v1/namespaces/${NS}/secrets/skybridge-secrets-1`)) === undefined);
  const r = await waitFor('bulk-a still served from one shard', async () => {
    const x = await chat('bulk-a/gpt-4o');
    return x.status === 200 ? x : undefined;
  });
  assert.match(r.auth ?? '', /^Bearer sk-a-\d{3}-x+$/);
  // The proxy's metrics name the revision it serves: the one the index names now.
  const cm = await api<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/configmaps/skybridge-config-index`);
  const revision = (JSON.parse(cm!.data['index.json']) as { revision: string }).revision;
  const metrics = await waitFor('the proxy serving the current revision', async () => {
    const text = await (await fetch(`${proxy.url}/metrics`)).text();
    return text.includes(`skybridge_config_revision_info{revision="${revision}"} 1`) ? text : undefined;
  }, 10_000);
  assert.equal(metrics.match(/^skybridge_config_revision_info\{/gm)?.length, 1, 'one revision at a time');
  const loadedAt = Number(/^skybridge_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(metrics)?.[1]);
  assert.ok(loadedAt > Date.now() / 1000 - 60, String(loadedAt));
});
