// A change to one resource costs one resource, on the real control plane: with a few hundred
// VirtualKeys (long names, so their entries in `sources` pass the 64 KiB the index keeps inline) the
// index is sharded (its sources in ConfigMaps of their own, the document in parts cut at resource
// boundaries); editing one VirtualKey rewrites the index and the one part holding that key, nothing
// else (resourceVersions), writes no other resource's status, and a proxy serves it, with /api still
// naming the custom resource each object came from.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { kubectlOk, kubeGet, startKubeApiServer, waitFor as waitUntil, type KubeApiServer } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { startOperator, type OperatorProcess } from '../helpers/operator-process.ts';

const NS = 'incr';
const COUNT = 300;
const GROUP = 'gateway.skybridge.dev/v1alpha1';

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;
let operator: OperatorProcess | undefined;
let proxy: RunningGateway | undefined;

const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);
const api = <T>(path: string): Promise<T | undefined> => kubeGet<T>(kube, agent, path);
const context = () => `--- operator ---\n${(operator?.output() ?? '').split('\n').slice(-30).join('\n')}\n--- proxy ---\n${proxy?.logs().split('\n').slice(-15).join('\n')}`;
const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> => waitUntil(what, fn, { timeoutMs, everyMs: 50, context });

/** Long names: each key's `sources` entry is ~270 bytes, so 300 of them pass the inline limit. */
const name = (i: number) => `vk-${String(i).padStart(4, '0')}-${'n'.repeat(100)}`;
const vk = (i: number, description = 'v1') => ({
  apiVersion: GROUP,
  kind: 'VirtualKey',
  metadata: { name: name(i), namespace: NS },
  spec: { description, valueFrom: { secretKeyRef: { name: 'keys', key: `vk-${i}` } }, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] },
});

interface Obj {
  metadata: { name: string; resourceVersion: string; generation?: number };
  data?: Record<string, string>;
  status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
}
const versions = async (path: string): Promise<Map<string, string>> =>
  new Map(((await api<{ items: Obj[] }>(path))?.items ?? []).map((o) => [o.metadata.name, o.metadata.resourceVersion]));
const rendered = () => versions(`/api/v1/namespaces/${NS}/configmaps?labelSelector=skybridge.dev%2Fconfig%3Dtrue`);
const secrets = () => versions(`/api/v1/namespaces/${NS}/secrets`);
const keys = () => versions(`/apis/${GROUP}/namespaces/${NS}/virtualkeys`);
const changed = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();

before(async () => {
  kube = await startKubeApiServer();
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  const data: Record<string, string> = { openai: 'sk-openai-incremental' };
  for (let i = 0; i < COUNT; i++) data[`vk-${i}`] = `sk-bf-incr-${String(i).padStart(6, '0')}`;
  await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keys', namespace: NS }, stringData: data }));
  const provider = { apiVersion: GROUP, kind: 'Provider', metadata: { name: 'openai', namespace: NS }, spec: { keys: [{ name: 'k', valueFrom: { secretKeyRef: { name: 'keys', key: 'openai' } } }] } };
  await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [provider, ...Array.from({ length: COUNT }, (_, i) => vk(i))] }));
  // Debug: each render pass logs `configuration rendered`, which the test counts (no resync pass
  // may fall within the edit).
  operator = startOperator(kube, { namespace: NS, identity: 'op-incr', args: ['--log-level', 'debug', '--resync-period', '3600'] });
  proxy = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig, HOME: kube.stateDir, POD_NAME: 'proxy-incr' }, args: ['--kube-namespace', NS] });
}, { timeout: 10 * 60_000 });

after(async () => {
  await proxy?.stop();
  await operator?.stop();
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

async function served(i: number, marker: string): Promise<string | undefined> {
  const res = await fetch(`${proxy!.url}/api/governance/virtual-keys/${name(i)}`);
  const text = await res.text();
  return res.ok && text.includes(marker) ? text : undefined;
}

/** Every VirtualKey's status is Ready for its generation: the operator has nothing left to write. */
async function settled(): Promise<boolean> {
  const items = (await api<{ items: Obj[] }>(`/apis/${GROUP}/namespaces/${NS}/virtualkeys`))?.items ?? [];
  return items.length === COUNT && items.every((o) => o.status?.observedGeneration === o.metadata.generation && o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

test('past the inline limit the index is sharded, and an edit to one VirtualKey rewrites only its part and the index', { timeout: 10 * 60_000 }, async () => {
  const text = await waitFor('the last key to be served', () => served(COUNT - 1, '"v1"'), 5 * 60_000);
  // The proxy reassembled the sources from their parts: /api still names the custom resource.
  assert.match(text, new RegExp(`"source":"VirtualKey ${NS}/${name(COUNT - 1)}"`));
  assert.match(text, /"managed_by":"kubernetes"/);
  await waitFor('every status to be written', settled, 5 * 60_000);

  const cm = await api<Obj>(`/api/v1/namespaces/${NS}/configmaps/skybridge-config-index`);
  const index = JSON.parse(cm!.data!['index.json']) as { parts: string[]; sourceParts?: string[]; sources?: Record<string, string>; checksums: Record<string, string> };
  assert.ok((index.sourceParts?.length ?? 0) >= 1, 'the sources are in parts of their own');
  assert.deepEqual(index.sources ?? {}, {}, 'and not in the index');
  assert.ok(index.parts.length > 1, `the document is in ${index.parts.length} parts cut at resource boundaries`);
  const indexBytes = Buffer.byteLength(cm!.data!['index.json']);
  assert.ok(indexBytes < 16 * 1024, `index is ${indexBytes} bytes for ${COUNT + 1} resources`);
  process.stdout.write(`# ${COUNT + 1} resources: index ${indexBytes} bytes, ${index.parts.length} parts, ${index.sourceParts?.length} sources parts\n`);

  const before = { rendered: await rendered(), secrets: await secrets(), keys: await keys() };
  const passes = () => (operator?.output() ?? '').split('"configuration rendered"').length - 1;
  const passesBefore = passes();
  const edited = 137;
  await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(vk(edited, 'v2')));
  await waitFor('the edit to be served', () => served(edited, '"v2"'));
  await waitFor('the edited key to be Ready again', settled);
  const after = { rendered: await rendered(), secrets: await secrets(), keys: await keys() };
  // One pass over every resource for the edit: its own writes coming back through the watch (the
  // part, the index, the key's status) start none (each used to cost another pass).
  assert.equal(passes() - passesBefore, 1, `render passes for one edit:\n${context()}`);

  const parts = changed(before.rendered, after.rendered);
  assert.equal(parts.length, 2, `rewritten: ${parts.join(', ')}`);
  assert.ok(parts.includes('skybridge-config-index'));
  assert.match(parts.find((p) => p !== 'skybridge-config-index') ?? '', /^skybridge-config-part-\d+$/);
  assert.deepEqual(changed(before.secrets, after.secrets), [], 'no Secret written');
  assert.deepEqual(changed(before.keys, after.keys), [name(edited)], 'only the edited key (spec, then its status) changed');
});
