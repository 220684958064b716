// The operator at 2,000 custom resources under the chart's memory settings (node with the flags the
// chart's command passes): everything renders and reports Ready, a bulk update of every CR renders
// again, and the resident set stays 64 MiB under the chart's 384 MiB limit throughout (sampled from
// the operator's own process_resident_memory_bytes). Run from TypeScript here, so the numbers
// include type stripping, which the image's compiled JavaScript does not pay.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch } from 'undici';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { assemble } from '../../proxy/src/config/kube-document.ts';

const NS = 'scale';
const COUNT = 2000;
/** The chart's 384 MiB limit less 64 MiB of headroom. */
const LIMIT_BYTES = 320 * 1024 * 1024;
const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
/** The node flags of the chart's operator command (charts/skybridge/templates/operator-deployment.yaml). */
const NODE_FLAGS = ['--max-semi-space-size=8', '--max-old-space-size=160'];

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;
let proc: ChildProcess | undefined;

const api = <T>(path: string): Promise<T | undefined> => kubeGet<T>(kube, agent, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);

async function renderedKeys(): Promise<{ count: number; updated?: number }> {
  const cms = (await api<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>(`/api/v1/namespaces/${NS}/configmaps?labelSelector=skybridge.dev%2Fconfig%3Dtrue`))?.items ?? [];
  const secret = await api<{ data?: Record<string, string> }>(`/api/v1/namespaces/${NS}/secrets/skybridge-secrets`);
  const byName = new Map(cms.map((c) => [c.metadata.name, c]));
  const r = assemble((n) => byName.get(n)?.data, (n) => (n === 'skybridge-secrets' ? secret?.data : undefined));
  if (r.state !== 'complete') return { count: 0 };
  const doc = r.document as { governance?: { virtual_keys?: { id: string; description?: string }[] } };
  const keys = doc.governance?.virtual_keys ?? [];
  return { count: keys.length, updated: keys.filter((k) => k.description === 'v2').length };
}

const items = (version: string) =>
  Array.from({ length: COUNT }, (_, i) => ({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'VirtualKey',
    metadata: { name: `vk-${i}`, namespace: NS },
    spec: { description: version, valueFrom: { secretKeyRef: { name: 'keys', key: `vk-${i}` } }, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] },
  }));

before(async () => {
  kube = await startKubeApiServer();
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  const data: Record<string, string> = { openai: 'sk-openai-1' };
  for (let i = 0; i < COUNT; i++) data[`vk-${i}`] = `sk-bf-scale-${String(i).padStart(6, '0')}`;
  await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keys', namespace: NS }, stringData: data }));
  await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'gateway.skybridge.dev/v1alpha1', kind: 'Provider', metadata: { name: 'openai', namespace: NS }, spec: { keys: [{ name: 'k', valueFrom: { secretKeyRef: { name: 'keys', key: 'openai' } } }] } }));
}, { timeout: 30 * 60_000 });

after(async () => {
  if (proc && proc.exitCode === null && proc.signalCode === null) {
    const exited = once(proc, 'exit');
    proc.kill('SIGKILL');
    await exited;
  }
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

test(`${COUNT} VirtualKeys render, a bulk update of all of them renders again, and the operator stays well under its memory limit`, { timeout: 20 * 60_000 }, async () => {
  await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items('v1') }));
  proc = spawn(NODE, [...NODE_FLAGS, MAIN, '--namespace', NS, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--identity', 'scale', '--ready-when', 'rendered', ...(process.env.SCALE_STATUS_CONCURRENCY ? ['--status-concurrency', process.env.SCALE_STATUS_CONCURRENCY] : [])], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: kube.kubeconfig, HOME: kube.stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  proc.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  let metricsUrl = '';
  for (let i = 0; i < 200 && !metricsUrl; i++) {
    const line = out.split('\n').find((l) => l.includes('"skybridge operator started"'));
    if (line) metricsUrl = (JSON.parse(line) as { metrics: string }).metrics;
    else await sleep(100);
  }
  assert.ok(metricsUrl, `operator did not start: ${out}`);
  let peak = 0;
  let peakHeap = 0;
  const sample = async () => {
    const text = await (await fetch(metricsUrl)).text();
    const value = (name: string) => Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1]);
    const rss = value('process_resident_memory_bytes');
    if (rss > peak) peak = rss;
    const heap = value('nodejs_heap_size_used_bytes');
    if (heap > peakHeap) peakHeap = heap;
    return rss;
  };
  const until = async (what: string, fn: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await fn())) {
      await sample();
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; peak RSS ${peak}\n${out.slice(-3000)}`);
      await sleep(500);
    }
  };
  const started = Date.now();
  await until('every key to render', async () => (await renderedKeys()).count === COUNT, 10 * 60_000);
  const firstRenderMs = Date.now() - started;
  await until('every status to be written', async () => {
    const list = await api<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>(`/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}/virtualkeys`);
    return (list?.items ?? []).filter((o) => o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === COUNT;
  }, 10 * 60_000);
  const afterFirst = await sample();

  // The bulk update that OOM-killed the operator at the old settings: every CR changes at once.
  const bulk = Date.now();
  await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items('v2') }));
  const applyMs = Date.now() - bulk;
  await until('the bulk update to render', async () => (await renderedKeys()).updated === COUNT, 10 * 60_000);
  const bulkMs = Date.now() - bulk;
  // Every status written for the new generation (written concurrently, --status-concurrency).
  await until('every status to be written for the update', async () => {
    const list = await api<{ items: { metadata: { generation?: number }; status?: { observedGeneration?: number } }[] }>(`/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}/virtualkeys`);
    return (list?.items ?? []).filter((o) => o.status?.observedGeneration === o.metadata.generation).length === COUNT;
  }, 10 * 60_000);
  const statusMs = Date.now() - bulk;
  const afterBulk = await sample();
  const mib = (n: number) => (n / 1024 / 1024).toFixed(0);
  process.stdout.write(`# ${COUNT} CRs: first render ${firstRenderMs} ms, bulk update (kubectl apply ${applyMs} ms) rendered in ${bulkMs} ms, every status written in ${statusMs} ms; RSS after first ${mib(afterFirst)} MiB, after bulk ${mib(afterBulk)} MiB, peak ${mib(peak)} MiB (heap used peak ${mib(peakHeap)} MiB)\n`);
  assert.ok(peak > 0 && peak < LIMIT_BYTES, `peak RSS ${mib(peak)} MiB`);
});
