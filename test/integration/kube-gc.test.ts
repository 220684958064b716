// Garbage collection of the owner references the gateway sets, on a real kube-apiserver with the real
// kube-controller-manager (garbage collector, namespace controller) next to it, so deletion behaves
// as in a cluster:
// - the operator's rendered part ConfigMaps and Secret are owned by the index ConfigMap: deleting the
//   index (foreground) removes them, an orphaning delete leaves them ownerless, and the operator
//   renders or adopts them again under the new index;
// - a proxy's served-report Lease is owned by its Pod: deleting the Pod removes the Lease; a pod in
//   another namespace cannot own it (the collector would delete it), so it is left unowned;
// - deleting the namespace removes everything in it and the namespace goes (no finalizer hangs it).
// The operator and proxies run with the chart's RBAC as static-token users.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch } from 'undici';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil, kubeconfigFor as kubeconfigForUser } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { operatorRbac, proxyRbac } from '../helpers/kube-rbac.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';

const NS = 'skybridge';
/** Where the proxy pods run when the configuration has a namespace of its own (chart `configNamespace`). */
const POD_NS = 'skybridge-pods';
const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
const INDEX = 'skybridge-config-index';
/** The label on everything the operator renders. */
const RENDERED = 'skybridge.dev/config=true';
/** How long the garbage collector may take for one deletion (it acts within about a second). */
const GC_MS = 20_000;

interface Meta {
  name: string;
  namespace?: string;
  uid: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
}
interface Obj {
  kind?: string;
  metadata: Meta;
  data?: Record<string, string>;
}
interface List {
  items: Obj[];
}

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;
let operator: ChildProcess | undefined;
let operatorOut = '';
const proxies: Record<string, RunningGateway> = {};

const api = <T = Obj>(path: string): Promise<T | undefined> => kubeGet<T>(kube, agent, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);
const cm = (name: string) => api(`/api/v1/namespaces/${NS}/configmaps/${name}`);
const lease = (name: string) => api(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${name}`);

function logs(): string {
  const tail = (s: string, n = 25) => s.split('\n').slice(-n).join('\n');
  return [
    `--- operator ---\n${tail(operatorOut)}`,
    ...Object.entries(proxies).map(([n, p]) => `--- ${n} ---\n${tail(p.logs())}`),
    `--- kube-controller-manager ---\n${tail(kube.controllerManagerLogs(), 15)}`,
  ].join('\n');
}

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = GC_MS): Promise<T> => waitUntil(what, fn, { timeoutMs, context: logs });

const kubeconfigFor = (user: string): string => kubeconfigForUser(kube, user);

function startOperator(): void {
  operatorOut = '';
  operator = spawn(NODE, [MAIN, '--namespace', NS, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--lease-duration', '3', '--identity', 'op', '--resync-period', '30'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfigFor('skybridge-operator'), HOME: kube.stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  operator.stdout!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
  operator.stderr!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
}

async function stopOperator(): Promise<void> {
  if (!operator || operator.exitCode !== null || operator.signalCode !== null) return;
  const exited = once(operator, 'exit');
  operator.kill('SIGTERM');
  await exited;
}

/** A Pod object as the kubelet would run it (none runs here: it stays Pending, and is deleted at once). */
async function createPod(name: string, namespace: string): Promise<Obj> {
  // The serviceaccount controller creates `default` in new namespaces; admission needs it for Pods.
  await waitFor(`the default ServiceAccount in ${namespace}`, () => api(`/api/v1/namespaces/${namespace}/serviceaccounts/default`));
  await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { app: 'skybridge-proxy' } }, spec: { containers: [{ name: 'proxy', image: 'skybridge:test' }] } }));
  return (await api(`/api/v1/namespaces/${namespace}/pods/${name}`))!;
}

/** A proxy following NS, reporting as the given pod (the chart passes these through the downward API). */
async function startProxy(pod: Obj): Promise<RunningGateway> {
  const p = await startGateway(undefined, {
    env: {
      KUBECONFIG: kubeconfigFor('skybridge-proxy'),
      HOME: kube.stateDir,
      POD_NAME: pod.metadata.name,
      POD_UID: pod.metadata.uid,
      POD_NAMESPACE: pod.metadata.namespace,
      SKYBRIDGE_SERVED_LEASE_SECONDS: '6',
    },
    args: ['--kube-namespace', NS],
  });
  proxies[pod.metadata.name] = p;
  return p;
}

/** What a proxy serves for the openai provider right now (its /api view). */
async function servedRetries(p: RunningGateway): Promise<number | undefined> {
  const res = await fetch(`${p.url}/api/providers/openai`);
  if (!res.ok) return undefined;
  const m = /"max_retries":(\d+)/.exec(await res.text());
  return m ? Number(m[1]) : undefined;
}

/** The rendered part ConfigMaps and Secret(s), by the label the operator puts on all it renders (ConfigMaps first). */
async function rendering(): Promise<Obj[]> {
  const selector = `labelSelector=${encodeURIComponent(RENDERED)}`;
  const [cms, secrets] = await Promise.all([api<List>(`/api/v1/namespaces/${NS}/configmaps?${selector}`), api<List>(`/api/v1/namespaces/${NS}/secrets?${selector}`)]);
  return [...(cms?.items ?? []).filter((o) => o.metadata.name !== INDEX).map((o) => ({ ...o, kind: 'ConfigMap' })), ...(secrets?.items ?? []).map((o) => ({ ...o, kind: 'Secret' }))];
}

/** Where one of them is read. */
const pathOf = (o: Obj): string => `/api/v1/namespaces/${NS}/${o.kind === 'Secret' ? 'secrets' : 'configmaps'}/${o.metadata.name}`;

/** The rendered parts and Secret, once all of them name the live index as their owner. */
async function renderedOwnedByIndex(): Promise<{ index: Obj; owned: Obj[] }> {
  return waitFor('the rendering owned by the index', async () => {
    const index = await cm(INDEX);
    if (!index || index.metadata.deletionTimestamp) return undefined;
    const owned = await rendering();
    if (!owned.some((o) => o.kind === 'Secret') || owned.some((o) => o.metadata.ownerReferences?.[0]?.uid !== index.metadata.uid)) return undefined;
    return { index, owned };
  }, 60_000);
}

/** Polls `fn` for `ms`, failing as soon as it says false: GC has had ample time to act wrongly. */
async function holds(what: string, ms: number, fn: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    assert.ok(await fn(), `${what}\n${logs()}`);
    await sleep(250);
  }
}

before(async () => {
  kube = await startKubeApiServer({ controllerManager: true, users: [{ name: 'skybridge-operator' }, { name: 'skybridge-proxy' }] });
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['create', 'namespace', POD_NS]);
  await kubectl(['apply', '-f', '-'], `${proxyRbac(NS)}\n---${operatorRbac(NS, { servedLeases: true })}`);
  await kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'llm-credentials', namespace: NS }, stringData: { openai: 'sk-openai-test-1' } }));
  await kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'openai', namespace: NS },
    spec: { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'openai' } } }], network_config: { max_retries: 3 } },
  }));
  startOperator();
}, { timeout: 30 * 60_000 });

after(async () => {
  for (const p of Object.values(proxies)) await p.stop();
  if (operator && operator.exitCode === null) {
    const exited = once(operator, 'exit');
    operator.kill('SIGKILL');
    await exited;
  }
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

describe('garbage collection with a real kube-controller-manager', { concurrency: false }, () => {
  test('the rendering is owned by the index: a foreground delete of the index removes parts and Secret, the proxy keeps serving, the operator renders again', { timeout: 120_000 }, async () => {
    const pod = await createPod('proxy-0', NS);
    const proxy = await startProxy(pod);
    await waitFor('the proxy serving the provider', async () => (await servedRetries(proxy)) === 3, 60_000);
    const { index, owned } = await renderedOwnedByIndex();
    assert.deepEqual(owned[0].metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'ConfigMap', name: INDEX, uid: index.metadata.uid, controller: true }]);
    // A wrong uid, kind or apiVersion would make the collector delete them (and the operator re-create
    // them under new uids): they stay put.
    await holds('the owned rendering kept its uids', 3000, async () => {
      const now = await renderedOwnedByIndex();
      return now.owned.every((o, n) => o.metadata.uid === owned[n].metadata.uid);
    });

    await stopOperator();
    const started = Date.now();
    await kubectl(['delete', 'configmap', INDEX, '-n', NS, '--cascade=foreground', '--wait=false']);
    for (const o of owned) await waitFor(`${o.metadata.name} collected`, async () => (await api(pathOf(o))) === undefined);
    await waitFor('the index gone', async () => (await cm(INDEX)) === undefined);
    process.stdout.write(`# index deleted (foreground): index and its ${owned.length} rendered objects gone in ${Date.now() - started} ms\n`);
    // The proxy logs the deleted index and keeps the last good configuration.
    await holds('the proxy kept serving after the rendering was deleted', 1500, async () => (await servedRetries(proxy)) === 3);

    startOperator();
    const again = await renderedOwnedByIndex();
    assert.notEqual(again.index.metadata.uid, index.metadata.uid);
    assert.ok(again.owned.every((o) => !owned.some((old) => old.metadata.uid === o.metadata.uid)), 'rendered afresh');
  });

  test('an orphaning delete of the index leaves the rendering unowned; the operator adopts it under the new index', { timeout: 120_000 }, async () => {
    const { index, owned } = await renderedOwnedByIndex();
    await stopOperator();
    await kubectl(['delete', 'configmap', INDEX, '-n', NS, '--cascade=orphan']);
    await waitFor('the index gone', async () => (await cm(INDEX)) === undefined);
    // The collector strips the reference to the deleted owner and leaves the objects.
    const orphans = await waitFor('the owner references removed', async () => {
      const now = await Promise.all(owned.map((o) => api(pathOf(o))));
      return now.every((o) => o && !o.metadata.ownerReferences?.length) ? (now as Obj[]) : undefined;
    });
    assert.deepEqual(orphans.map((o) => o.metadata.uid), owned.map((o) => o.metadata.uid));

    startOperator();
    const adopted = await renderedOwnedByIndex();
    assert.notEqual(adopted.index.metadata.uid, index.metadata.uid);
    assert.deepEqual(adopted.owned.map((o) => o.metadata.uid), owned.map((o) => o.metadata.uid), 'the same objects, now owned by the new index');
  });

  test("a proxy's served-report Lease is owned by its Pod and goes when the Pod is deleted", { timeout: 120_000 }, async () => {
    const pod = (await api(`/api/v1/namespaces/${NS}/pods/proxy-0`))!;
    const owned = await waitFor('the Lease owned by the pod', async () => {
      const l = await lease('proxy-0');
      return l?.metadata.ownerReferences?.[0]?.uid === pod.metadata.uid ? l : undefined;
    });
    assert.deepEqual(owned.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'proxy-0', uid: pod.metadata.uid }]);
    // A valid reference: the collector leaves it alone (the proxy would re-create a deleted one under a new uid).
    await holds('the Lease kept its uid while the pod lives', 3000, async () => (await lease('proxy-0'))?.metadata.uid === owned.metadata.uid);

    // The pod goes the hard way (node lost, kill): no chance to delete its own Lease.
    const proxy = proxies['proxy-0'];
    proxy.process.kill('SIGKILL');
    await once(proxy.process, 'exit').catch(() => undefined);
    delete proxies['proxy-0'];
    const started = Date.now();
    await kubectl(['delete', 'pod', 'proxy-0', '-n', NS]);
    await waitFor('the Lease collected with its pod', async () => (await lease('proxy-0')) === undefined);
    process.stdout.write(`# pod deleted: its served-report Lease collected in ${Date.now() - started} ms (lease duration 6 s)\n`);
  });

  test('a proxy pod in another namespace leaves its Lease unowned, so the collector does not delete it', { timeout: 120_000 }, async () => {
    const pod = await createPod('proxy-1', POD_NS);
    await startProxy(pod);
    const first = await waitFor('the Lease of the pod in the other namespace', () => lease('proxy-1'));
    // Not deleted and re-created over and over (which would also flap the operator's served count).
    await holds('the Lease kept its uid', 4000, async () => (await lease('proxy-1'))?.metadata.uid === first.metadata.uid);
    assert.equal(first.metadata.ownerReferences, undefined);

    // Why: a namespaced owner is looked up in the dependent's namespace. A Lease naming that pod as
    // owner (what the proxy used to write) is deleted by the collector although the pod is alive.
    await kubectl(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'cross-namespace-owner', namespace: NS, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'proxy-1', uid: pod.metadata.uid }] },
      spec: { holderIdentity: 'proxy-1' },
    }));
    await waitFor('the cross-namespace-owned Lease collected', async () => (await lease('cross-namespace-owner')) === undefined);
    assert.ok(await api(`/api/v1/namespaces/${POD_NS}/pods/proxy-1`), 'the pod itself is alive');
  });

  test('deleting the namespace removes the custom resources, the rendering and the Leases, and the namespace goes', { timeout: 180_000 }, async () => {
    const started = Date.now();
    await kubectl(['delete', 'namespace', NS, '--wait=false']);
    const ns = await waitFor('the namespace Terminating', () => api<{ status: { phase: string } }>(`/api/v1/namespaces/${NS}`));
    assert.equal(ns.status.phase, 'Terminating');
    await waitFor('the namespace gone', async () => (await api(`/api/v1/namespaces/${NS}`)) === undefined, 120_000);
    process.stdout.write(`# namespace with the operator and a proxy still running deleted in ${Date.now() - started} ms\n`);
    // Everything in it went with it (the custom resources carry no finalizer that could hang it).
    for (const path of [`/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}/providers`, `/api/v1/namespaces/${NS}/configmaps`, `/api/v1/namespaces/${NS}/secrets`, `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`]) {
      const list = await api<List>(path);
      assert.deepEqual(list?.items.map((o) => o.metadata.name), [], path);
    }
  });
});
