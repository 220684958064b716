// The chart's proxy Role grants Lease writes that RBAC cannot narrow by name, so the chart adds a
// ValidatingAdmissionPolicy (templates/proxy-lease-policy.yaml). On a real kube-apiserver, with the
// chart's own rendering of the proxies' ServiceAccount, Role and policy, and tokens the API server
// issues for that account: the proxy's own reporter (served-report.ts) still creates, renews and
// deletes its Lease, while the same account can neither rewrite nor delete the operator's leader
// Lease, nor write an unlabelled Lease, nor (with a pod-bound token) another pod's report.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor } from '../helpers/kube.ts';
import { ServedReporter } from '../../proxy/src/state/served-report.ts';
import { SERVED_REPORT_LABEL } from '../../proxy/src/state/served-contract.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const NS = 'skybridge';
/** `helm template sb ...`: the chart's names for release "sb". */
const SA = 'sb-skybridge-proxy';
const LEADER = 'sb-skybridge-operator';
const POD = 'sb-skybridge-proxy-7d9f-abcde';

let kube: KubeApiServer;
let agent: Agent;
let podToken = '';
let plainToken = '';

const leasePath = (name?: string) => `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases${name ? `/${name}` : ''}`;
const lease = (name: string) => kubeGet<{ metadata: { name: string; labels?: Record<string, string> }; spec: { holderIdentity?: string } }>(kube, agent, leasePath(name));

/** One request to the API server as the proxies' service account: status and message. */
async function asProxy(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; message: string }> {
  const res = await fetch(`${kube.url}${path}`, {
    method,
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { message?: string };
  return { status: res.status, message: json.message ?? '' };
}

const leaseBody = (name: string, labels: Record<string, string> = {}, resourceVersion?: string) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: NS, labels, ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { holderIdentity: name, leaseDurationSeconds: 15 },
});

function kubeconfigWithToken(token: string, name: string): KubeConfig {
  const config = parseYaml(readFileSync(kube.kubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
  config.users[0].user.token = token;
  const file = join(kube.stateDir, `${name}-kubeconfig`);
  writeFileSync(file, stringifyYaml(config));
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
}

before(async () => {
  kube = await startKubeApiServer();
  agent = new Agent({ connect: { ca: kube.ca } });
  const build = await run('bash', [join(ROOT, 'test/kube/build.sh'), 'helm'], { maxBuffer: 1 << 24 });
  const helm = join(build.stdout.trim().split('\n').at(-1) as string, 'helm');
  const version = (JSON.parse(await kubectlOk(kube, ['version', '-o', 'json'])) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion;
  const rendered = await run(helm, ['template', 'sb', join(ROOT, 'charts/skybridge'), '-n', NS, '--kube-version', version,
    '--show-only', 'templates/proxy-serviceaccount.yaml', '--show-only', 'templates/proxy-rbac.yaml', '--show-only', 'templates/proxy-lease-policy.yaml'], { maxBuffer: 1 << 24 });
  await kubectlOk(kube, ['create', 'namespace', NS]);
  await kubectlOk(kube, ['apply', '-f', '-'], rendered.stdout);
  // The operator's leader Lease, as the operator writes it.
  await kubectlOk(kube, ['apply', '-f', '-'], JSON.stringify({ ...leaseBody(LEADER), spec: { holderIdentity: 'operator-0', leaseDurationSeconds: 15 } }));
  // A pod of that account (it stays Pending: no scheduler), so a token can be bound to it as a kubelet's is.
  await kubectlOk(kube, ['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: POD, namespace: NS },
    spec: { serviceAccountName: SA, automountServiceAccountToken: false, containers: [{ name: 'proxy', image: 'skybridge:test' }] },
  }));
  plainToken = (await kubectlOk(kube, ['create', 'token', SA, '-n', NS])).trim();
  podToken = (await kubectlOk(kube, ['create', 'token', SA, '-n', NS, '--bound-object-kind', 'Pod', '--bound-object-name', POD])).trim();
  // The policy applies once the API server has loaded it: wait until an unlabelled Lease is refused
  // (one let through before that is removed, so the tests start from the same state).
  await waitFor('the lease policy to take effect', async () => {
    const probe = await asProxy(plainToken, 'POST', leasePath(), leaseBody('policy-probe'));
    if (probe.status === 201) await kubectlOk(kube, ['delete', 'lease', 'policy-probe', '-n', NS]);
    return probe.status === 403 || undefined;
  }, { timeoutMs: 30_000 });
}, { timeout: 20 * 60_000 });

after(async () => {
  await agent?.close();
  await kube?.stop();
});

describe("the proxies' service account and Leases", () => {
  test("the proxy's reporter, with a pod-bound token, creates, renews and deletes its own Lease", async () => {
    const reporter = new ServedReporter({
      kc: kubeconfigWithToken(podToken, 'pod-bound'),
      namespace: NS,
      identity: POD,
      leaseSeconds: 3,
      pollMs: 100,
      state: () => ({ revision: 'r1', sections: ['providers'], mcp: {} }),
    });
    reporter.start();
    try {
      const first = await waitFor('the report Lease', async () => (await lease(POD)) ?? undefined, { timeoutMs: 20_000 });
      assert.equal(first.metadata.labels?.[SERVED_REPORT_LABEL], 'true');
      // A renewal is an update: the policy lets it through (renewTime moves).
      const renewed = async () => (await kubeGet<{ spec: { renewTime?: string } }>(kube, agent, leasePath(POD)))?.spec.renewTime;
      const before = await renewed();
      await waitFor('a renewal', async () => ((await renewed()) !== before) || undefined, { timeoutMs: 20_000 });
    } finally {
      await reporter.stop();
    }
    assert.equal(await lease(POD), undefined, 'deleted on stop');
  });

  test("the operator's leader Lease can be neither rewritten nor deleted", async () => {
    const current = await kubeGet<{ metadata: { resourceVersion: string } }>(kube, agent, leasePath(LEADER));
    assert.ok(current);
    for (const token of [plainToken, podToken]) {
      const put = await asProxy(token, 'PUT', leasePath(LEADER), { ...leaseBody(LEADER, { [SERVED_REPORT_LABEL]: 'true' }, current.metadata.resourceVersion), spec: { holderIdentity: 'hijacker', leaseDurationSeconds: 3600 } });
      assert.equal(put.status, 403, put.message);
      assert.match(put.message, /operator's leader Lease/);
      const del = await asProxy(token, 'DELETE', leasePath(LEADER));
      assert.equal(del.status, 403, del.message);
    }
    assert.equal((await lease(LEADER))?.spec.holderIdentity, 'operator-0', 'the leader is untouched');
  });

  test('an unlabelled Lease is refused; with a pod-bound token, so is another pod\'s report', async () => {
    const unlabelled = await asProxy(plainToken, 'POST', leasePath(), leaseBody('not-a-report'));
    assert.equal(unlabelled.status, 403, unlabelled.message);
    assert.match(unlabelled.message, /served-report/);
    assert.equal(await lease('not-a-report'), undefined);

    const other = await asProxy(podToken, 'POST', leasePath(), leaseBody('sb-skybridge-proxy-other-pod', { [SERVED_REPORT_LABEL]: 'true' }));
    assert.equal(other.status, 403, other.message);
    assert.match(other.message, new RegExp(`named after its own pod \\(${POD}\\)`));

    // Labelling a Lease that was not a report does not make it one to take over.
    await kubectlOk(kube, ['apply', '-f', '-'], JSON.stringify(leaseBody('someone-elses')));
    const current = await kubeGet<{ metadata: { resourceVersion: string } }>(kube, agent, leasePath('someone-elses'));
    const relabel = await asProxy(plainToken, 'PUT', leasePath('someone-elses'), leaseBody('someone-elses', { [SERVED_REPORT_LABEL]: 'true' }, current?.metadata.resourceVersion));
    assert.equal(relabel.status, 403, relabel.message);
  });
});
