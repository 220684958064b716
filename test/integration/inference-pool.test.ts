// A provider behind an InferencePool (Gateway API Inference Extension, inference.networking.k8s.io/v1)
// on the real kube-apiserver: the pool's CRD from the Go module, a pool and EndpointSlices pointing
// at three mock vLLM servers (OpenAI-compatible chat plus a /metrics page with a settable queue depth
// and KV-cache use), and a gateway whose Kubernetes credentials are the chart's proxy service account
// with the chart's InferencePool Role (get, list, watch on inferencepools and endpointslices, nothing
// else). Requests go through the official openai SDK.
//
// The API server refuses loopback addresses in EndpointSlices, so the mock servers listen on this
// machine's own non-loopback address, one port each; each slice lists its server's port.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { kubectlOk, startKubeApiServer, waitFor, type KubeApiServer } from '../helpers/kube.ts';
import { goModuleDir } from '../helpers/go-module.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const INFERENCE_EXTENSION = 'sigs.k8s.io/gateway-api-inference-extension@v1.2.0';
const NS = 'models';
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const SCRAPE_MS = 200;

let kube: KubeApiServer;
let gw: InProcessGateway;
const servers: MockProvider[] = [];
let host = '';

/** This machine's first non-loopback address (IPv4 first): EndpointSlices may not hold loopback ones. */
function ownAddress(): string {
  const all = Object.values(networkInterfaces()).flat().filter((a) => a && !a.internal && !a.address.startsWith('fe80') && !a.address.startsWith('169.254.'));
  const pick = all.find((a) => a?.family === 'IPv4') ?? all.find((a) => a?.family === 'IPv6');
  assert.ok(pick, 'this machine has no non-loopback address: EndpointSlices cannot point at a local server');
  return pick.address;
}

const slice = (name: string, server: MockProvider, ready = true) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: NS, labels: { app: 'llama', 'kubernetes.io/service-name': 'llama' } },
  addressType: host.includes(':') ? 'IPv6' : 'IPv4',
  ports: [{ name: 'http', port: server.port, protocol: 'TCP' }],
  endpoints: [{ addresses: [host], conditions: { ready } }],
});

const apply = (obj: unknown) => kubectlOk(kube, ['apply', '-f', '-'], JSON.stringify(obj));

const sdk = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });

/** Sends `n` chat requests one after another; how many each server received. */
async function send(n: number): Promise<number[]> {
  const before = servers.map((s) => chats(s));
  for (let i = 0; i < n; i++) {
    const answer = await sdk().chat.completions.create({ model: `vllm/${MODEL}`, messages: [{ role: 'user', content: `hello ${i}` }] });
    assert.ok(answer.choices[0].message.content);
  }
  return servers.map((s, i) => chats(s) - before[i]);
}
const chats = (s: MockProvider) => s.requests.filter((r) => r.path === '/v1/chat/completions').length;

before(async () => {
  host = ownAddress();
  // One after the other: build.sh runs hold a lock each other's output depends on.
  kube = await startKubeApiServer();
  const build = await run('bash', [join(ROOT, 'test/kube/build.sh'), 'helm'], { maxBuffer: 1 << 24 });
  const extension = await goModuleDir(INFERENCE_EXTENSION);
  const crd = readFileSync(join(extension, 'config/crd/bases/inference.networking.k8s.io_inferencepools.yaml'), 'utf8');
  await kubectlOk(kube, ['apply', '--server-side', '-f', '-'], crd);
  await kubectlOk(kube, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/inferencepools.inference.networking.k8s.io']);
  await kubectlOk(kube, ['create', 'namespace', NS]);

  // The proxies' ServiceAccount and the chart's InferencePool Role, as helm renders them.
  const helm = join(build.stdout.trim().split('\n').at(-1) as string, 'helm');
  const version = (JSON.parse(await kubectlOk(kube, ['version', '-o', 'json'])) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion;
  const rendered = await run(helm, ['template', 'sb', join(ROOT, 'charts/skybridge'), '-n', NS, '--kube-version', version, '--show-only', 'templates/proxy-serviceaccount.yaml', '--show-only', 'templates/proxy-rbac.yaml', '--set', 'proxy.inferencePools.enabled=true', '--set', `configNamespace=${NS}`], { maxBuffer: 1 << 24 });
  await kubectlOk(kube, ['apply', '-f', '-'], rendered.stdout);
  const token = (await kubectlOk(kube, ['create', 'token', 'sb-skybridge-proxy', '-n', NS])).trim();
  const config = parseYaml(readFileSync(kube.kubeconfig, 'utf8')) as { users: { user: Record<string, string> }[] };
  config.users[0].user = { token };
  const kubeconfig = join(kube.stateDir, 'proxy-kubeconfig');
  writeFileSync(kubeconfig, stringifyYaml(config));

  for (let i = 0; i < 3; i++) servers.push(await startMockProvider({ host, chunkDelayMs: 0 }));
  await apply({
    apiVersion: 'inference.networking.k8s.io/v1',
    kind: 'InferencePool',
    metadata: { name: 'llama', namespace: NS },
    spec: { selector: { matchLabels: { app: 'llama' } }, targetPorts: servers.map((s) => ({ number: s.port })), endpointPickerRef: { name: 'llama-epp', port: { number: 9002 } } },
  });
  for (const [i, s] of servers.entries()) await apply(slice(`llama-${i}`, s));
  // A slice of another pool's servers (another label) is never read.
  await apply({ ...slice('other', servers[0]), metadata: { name: 'other', namespace: NS, labels: { app: 'other' } } });

  gw = await startGateway(
    {
      client: { enable_logging: false },
      providers: {
        vllm: { keys: [{ name: 'k', value: 'sk-vllm' }], network_config: { inference_pool: { name: 'llama', namespace: NS, scrape_interval_ms: SCRAPE_MS } } },
        ghost: { keys: [{ name: 'k', value: 'sk-vllm' }], custom_provider_config: { base_provider_type: 'openai' }, network_config: { inference_pool: { name: 'no-such-pool', namespace: NS } } },
      },
    },
    { env: { KUBECONFIG: kubeconfig } },
  );
  // Discovery has run once every server can be reached.
  await waitFor('the pool endpoints', async () => (await send(3)).every((n) => n === 1) || undefined, { timeoutMs: 30_000 });
}, { timeout: 30 * 60_000 });

after(async () => {
  await gw?.stop();
  await Promise.allSettled(servers.map((s) => s.close()));
  await kube?.stop();
});

describe('InferencePool provider', () => {
  test('requests go to the server with the shortest queue', async () => {
    servers[0].setLoad({ waiting: 5, kvCache: 0.2 });
    servers[1].setLoad({ waiting: 0, kvCache: 0.1 });
    servers[2].setLoad({ waiting: 3, kvCache: 0.3 });
    // Until the next scrape, the picks may still be in turn.
    await waitFor('the loads to be scraped', async () => (await send(3)).join() === '0,3,0' || undefined);
    assert.deepEqual(await send(6), [0, 6, 0]);
  });

  test('when that server reports a long queue and a full KV cache, traffic moves to the next least loaded', async () => {
    servers[1].setLoad({ waiting: 12, kvCache: 0.97 });
    await waitFor('the new load to be scraped', async () => (await send(3)).join() === '0,0,3' || undefined);
    assert.deepEqual(await send(6), [0, 0, 6]);
    // A saturated KV cache alone is enough to be passed over: server 1 wins on its queue, then loses on its cache.
    servers[1].setLoad({ waiting: 0, kvCache: 0.1 });
    await waitFor('server 1 to win again', async () => (await send(3)).join() === '0,3,0' || undefined);
    servers[1].setLoad({ waiting: 0, kvCache: 0.95 });
    await waitFor('the cache report to be scraped', async () => (await send(3)).join() === '0,0,3' || undefined);
    assert.deepEqual(await send(4), [0, 0, 4]);
  });

  test('with no metrics from any server, requests go round robin', async () => {
    for (const s of servers) s.setLoad(null);
    // Reports turn stale after three scrape intervals.
    await waitFor('round robin', async () => (await send(3)).every((n) => n === 1) || undefined);
    assert.deepEqual(await send(6), [2, 2, 2]);
  });

  test('an endpoint removed from its EndpointSlice stops receiving traffic', async () => {
    await apply({ ...slice('llama-0', servers[0]), endpoints: [] });
    await waitFor('server 0 to leave the pool', async () => (await send(4))[0] === 0 || undefined);
    const counts = await send(6);
    assert.deepEqual(counts, [0, 3, 3]);
    // A not-ready endpoint is left out the same way, and comes back when ready.
    await apply(slice('llama-0', servers[0], false));
    assert.equal((await send(4))[0], 0);
    await apply(slice('llama-0', servers[0], true));
    await waitFor('server 0 to come back', async () => (await send(3))[0] === 1 || undefined);
  });

  test('a pool that does not exist: 503 naming the pool; it serves once the pool is created', async () => {
    const err = await sdk().chat.completions.create({ model: `ghost/${MODEL}`, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => assert.fail('answered without a pool'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 503);
    assert.match(err.message, /InferencePool models\/no-such-pool does not exist/);
    await apply({
      apiVersion: 'inference.networking.k8s.io/v1',
      kind: 'InferencePool',
      metadata: { name: 'no-such-pool', namespace: NS },
      spec: { selector: { matchLabels: { app: 'llama' } }, targetPorts: [{ number: servers[2].port }], endpointPickerRef: { name: 'llama-epp', port: { number: 9002 } } },
    });
    await waitFor('the new pool to serve', async () => {
      const before = chats(servers[2]);
      await sdk().chat.completions.create({ model: `ghost/${MODEL}`, messages: [{ role: 'user', content: 'hi' }] });
      return chats(servers[2]) === before + 1 || undefined;
    });
  });
});
