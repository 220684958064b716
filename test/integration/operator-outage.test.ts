// A brief API-server outage on the real control plane: the API server is stopped for 5 s (longer
// than the operator's renew deadline, 4 s of its 6 s lease) and started again. The leader keeps its
// term (no one could take the lease while the API server was away): the Lease still names it with
// no transition, it does not start a new term (which would re-render and rewrite every status from
// scratch), and a change made after the API server's return is served by a proxy within 2 s.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { kubectlOk, kubeGet, startKubeApiServer, waitFor as waitUntil, type KubeApiServer } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { startOperator, type OperatorProcess } from '../helpers/operator-process.ts';
import { patience } from '../helpers/patience.ts';

const NS = 'outage';

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;
let operator: OperatorProcess | undefined;
let proxy: RunningGateway | undefined;

const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);
const apply = (obj: unknown) => kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify(obj));
const context = () => `--- operator ---\n${(operator?.output() ?? '').split('\n').slice(-30).join('\n')}\n--- proxy ---\n${proxy?.logs().split('\n').slice(-15).join('\n')}`;
const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> => waitUntil(what, fn, { timeoutMs, everyMs: 20, context });

const provider = (maxRetries: number) => ({
  apiVersion: 'gateway.skybridge.dev/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'openai', namespace: NS },
  spec: { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm', key: 'openai' } } }], network_config: { max_retries: maxRetries } },
});

async function servedRetries(): Promise<number | undefined> {
  const res = await fetch(`${proxy!.url}/api/providers/openai`);
  const m = /"max_retries":(\d+)/.exec(await res.text());
  return res.ok && m ? Number(m[1]) : undefined;
}

interface Lease {
  spec: { holderIdentity?: string; leaseTransitions?: number; acquireTime?: string };
}
const lease = () => kubeGet<Lease>(kube, agent, `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/skybridge-operator`);
const terms = () => (operator?.output() ?? '').split('\n').filter((l) => l.includes('"became the leader"')).length;

before(async () => {
  kube = await startKubeApiServer();
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'llm', namespace: NS }, stringData: { openai: 'sk-openai-outage-1' } });
  await apply(provider(1));
  // The default lease (6 s: renew deadline 4 s), so a 5 s outage outlasts the renew deadline.
  operator = startOperator(kube, { namespace: NS, identity: 'op-outage' });
  proxy = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig, HOME: kube.stateDir, POD_NAME: 'proxy-outage' }, args: ['--kube-namespace', NS] });
}, { timeout: 10 * 60_000 });

after(async () => {
  await proxy?.stop();
  await operator?.stop();
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

test('the leader keeps its lease through a 5 s API-server outage and a change after it is served within 2 s', { timeout: 5 * 60_000 }, async (t) => {
  await waitFor('the proxy to serve the Provider', async () => (await servedRetries()) === 1, 60_000);
  const held = await waitFor('the lease', async () => ((await lease())?.spec.holderIdentity === 'op-outage' ? lease() : undefined));
  assert.equal(terms(), 1);

  const stoppedAt = Date.now();
  await kube.restart({ downMs: 5000 });
  const back = Date.now();
  t.diagnostic(`API server away for ${back - stoppedAt} ms`);
  // The first write after the return may still meet the API server finishing its start.
  const written = await waitFor('the API server to take a write', async () => {
    await apply(provider(2));
    return Date.now();
  });
  await waitFor('the proxy to serve the change made after the outage', async () => (await servedRetries()) === 2);
  const servedMs = Date.now() - written;
  t.diagnostic(`the change was served ${servedMs} ms after it was written (${Date.now() - back} ms after the API server returned)`);

  const now = await lease();
  assert.equal(now?.spec.holderIdentity, 'op-outage', 'the lease still names the leader');
  assert.equal(now?.spec.leaseTransitions ?? 0, held?.spec.leaseTransitions ?? 0, 'no leader transition');
  assert.equal(now?.spec.acquireTime, held?.spec.acquireTime, 'the same term: the lease was not acquired again');
  assert.equal(terms(), 1, `the leader started no new term:\n${context()}`);
  assert.ok(servedMs < patience(2000), `the change took ${servedMs} ms to be served`);
});
