// Team and Customer resources on the real control plane: a kube-apiserver, the operator and a proxy
// following it, with the chart's RBAC as static-token users, and the official openai SDK as the
// client. A Customer, a Team under it with a small budget, and a VirtualKey in that team: the key's
// requests are served (a RoutingRule scoped to the team routes them) until the team's budget is
// spent, then refused with a 402 naming the team's budget. The Team is Ready only once the proxy
// serves it. Deleting the Team refuses the key's requests (it is never served without its team's
// limits) and the key's status, printer columns and Events say the team is missing; recreating it
// serves the key again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import OpenAI from 'openai';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil, kubeconfigFor, condition, type Condition } from '../helpers/kube.ts';
import { operatorRbac, proxyRbac } from '../helpers/kube-rbac.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { startOperator, type OperatorProcess } from '../helpers/operator-process.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';

const NS = 'skybridge';
const GROUP = 'gateway.skybridge.dev/v1alpha1';
const GROUP_PATH = `/apis/${GROUP}/namespaces/${NS}`;
const VK_VALUE = 'sk-bf-ml-team-e2e-0001';
/** A few requests' worth at gpt-4o-mini prices (the mock reports real token counts). */
const TEAM_BUDGET_USD = 0.00002;

let kube: KubeApiServer | undefined;
let agent: Agent | undefined;
let operator: OperatorProcess | undefined;
let mock: MockProvider | undefined;
let proxy: RunningGateway | undefined;
let crds: InstalledCrds | undefined;

interface Cr {
  metadata: { name: string; generation?: number };
  status?: { observedGeneration?: number; reason?: string; served?: string; conditions?: Condition[] };
}
interface KubeEvent {
  type: string;
  reason: string;
  note: string;
  regarding: { kind: string; name: string };
}

const api = <T = Cr>(path: string): Promise<T | undefined> => kubeGet<T>(kube!, agent!, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube!, args, stdin);
const apply = (obj: unknown) => kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify(obj));
const logs = () => [`--- operator ---\n${(operator?.output() ?? '').split('\n').slice(-25).join('\n')}`, `--- proxy ---\n${proxy?.logs().split('\n').slice(-25).join('\n') ?? ''}`].join('\n');
// Generous: two cores shared with other work (scaled further by the machine's load).
const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> => waitUntil(what, fn, { timeoutMs, everyMs: 200, context: logs });

/** The CR once the operator has judged its current generation and `ok` holds. */
const judged = (plural: string, name: string, ok: (o: Cr) => boolean, what = `${plural}/${name} to be judged`) =>
  waitFor(what, async () => {
    const o = await api(`${GROUP_PATH}/${plural}/${name}`);
    return o && o.status?.observedGeneration === o.metadata.generation && ok(o) ? o : undefined;
  });
const ready = (plural: string, name: string) => judged(plural, name, (o) => condition(o, 'Ready')?.status === 'True', `${plural}/${name} to be Ready`);

const cr = (kind: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: GROUP, kind, metadata: { name, namespace: NS }, spec });
const team = (maxUsd: number) => cr('Team', 'ml', { name: 'Machine learning', customer_id: 'acme', budget: { max_limit: maxUsd, reset_duration: '1d' } });

/** The SDK as a caller with the virtual key as its API key (a Bearer token), as applications use it. */
const sdk = () => new OpenAI({ baseURL: `${proxy!.url}/v1`, apiKey: VK_VALUE, maxRetries: 0 });
const ask = () => sdk().chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Summarise the quarterly numbers for the machine learning team, please.' }] });

before(async () => {
  kube = await startKubeApiServer({ users: [{ name: 'skybridge-operator' }, { name: 'skybridge-proxy' }] });
  agent = new Agent({ connect: { ca: kube.ca } });
  mock = await startMockProvider();
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], `${proxyRbac(NS)}\n---${operatorRbac(NS, { servedLeases: true })}`);
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'llm-credentials', namespace: NS }, stringData: { openai: 'sk-openai-teams-0123456789', 'vk-ml': VK_VALUE } });
  operator = startOperator(kube, { namespace: NS, identity: 'op-teams', kubeconfig: kubeconfigFor(kube, 'skybridge-operator'), args: ['--lease-duration', '5', '--resync-period', '30'] });
  proxy = await startGateway(undefined, { env: { KUBECONFIG: kubeconfigFor(kube, 'skybridge-proxy'), HOME: kube.stateDir, POD_NAME: 'proxy-teams' }, args: ['--kube-namespace', NS] });
  await kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      cr('Provider', 'openai', { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'openai' } } }], network_config: { base_url: `${mock.url}/openai`, max_retries: 0 } }),
      cr('Customer', 'acme', { name: 'ACME Corp', budget: { max_limit: 100, reset_duration: '1M' } }),
      team(TEAM_BUDGET_USD),
      cr('VirtualKey', 'ml-key', { valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'vk-ml' } }, team_id: 'ml', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }),
      // The team's calls go to the small model: a rule scoped to the Team by name.
      cr('RoutingRule', 'ml-mini', { scope: 'team', scope_id: 'ml', targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }] }),
    ],
  }));
}, { timeout: 30 * 60_000 });

after(async () => {
  await Promise.all([proxy?.stop(), operator?.stop(), mock?.close()]);
  await agent?.close();
  await crds?.close();
  await kube?.stop();
});

describe('Team and Customer kinds', { concurrency: false }, () => {
  test('a Team and its Customer are Ready once the proxy serves them, with their columns in kubectl get', { timeout: 5 * 60_000 }, async () => {
    for (const [plural, name] of [['customers', 'acme'], ['teams', 'ml'], ['virtualkeys', 'ml-key'], ['routingrules', 'ml-mini']]) {
      const o = await ready(plural, name);
      assert.equal(condition(o, 'Accepted')?.reason, 'Valid', `${plural}/${name}`);
      assert.equal(condition(o, 'Ready')?.reason, 'Served', `${plural}/${name}: served by the one live replica, not only rendered`);
      assert.equal(o.status?.served, '1/1');
    }
    const teams = await kubectl(['get', '-n', NS, 'teams']);
    assert.match(teams, /^NAME\s+DISPLAY NAME\s+CUSTOMER\s+BUDGET\s+READY\s+REASON\s+SERVED\s+AGE/);
    assert.match(teams, /\nml\s+Machine learning\s+acme\s+\S+\s+True\s+Served\s+1\/1\s/);
    assert.match(await kubectl(['get', '-n', NS, 'sbcustomer']), /\nacme\s+ACME Corp\s+100\s+True\s+Served\s+1\/1\s/);
    // The proxy serves them as the objects the resources stand for, and names the resource to edit.
    const served = await (await fetch(`${proxy!.url}/api/governance/teams`)).text();
    assert.match(served, /"id":"ml"/);
    assert.match(served, new RegExp(`Team ${NS}/ml`));
  });

  test("the key's requests are routed by the team's rule and refused with a 402 naming the team's budget once it is spent", { timeout: 3 * 60_000 }, async () => {
    mock!.requests.length = 0;
    let served = 0;
    let refusal: InstanceType<typeof OpenAI.APIError> | undefined;
    for (let i = 0; i < 40 && !refusal; i++) {
      try {
        const answer = await ask();
        assert.match(answer.choices[0].message.content ?? '', /^Mock reply to: /);
        served++;
      } catch (err) {
        if (!(err instanceof OpenAI.APIError)) throw err;
        refusal = err;
      }
    }
    assert.ok(refusal, `no refusal after ${served} requests: the team budget of $${TEAM_BUDGET_USD} was not applied`);
    assert.ok(served >= 1, 'the key was served before its team spent its budget');
    assert.equal(refusal.status, 402);
    assert.equal(refusal.code, 'budget_exceeded');
    assert.match(refusal.message, /budget 'team-ml' is exhausted \(limit \$0\.00002 per 1d\)/);
    // Every served call went where the team's rule sends it; the refused one went nowhere.
    assert.equal(mock!.requests.length, served);
    for (const r of mock!.requests) assert.equal((r.body as { model?: string }).model, 'gpt-4o-mini');
    process.stdout.write(`# ${served} requests served before the team's $${TEAM_BUDGET_USD} budget refused the next\n`);
  });

  test("deleting the Team refuses the key's requests (never served without its team's limits) and its status names the missing Team", { timeout: 5 * 60_000 }, async () => {
    await kubectl(['delete', '-n', NS, 'team', 'ml', '--wait=true']);
    const vk = await judged('virtualkeys', 'ml-key', (o) => condition(o, 'Accepted')?.status === 'False', 'the key to be refused');
    const accepted = condition(vk, 'Accepted');
    assert.equal(accepted?.reason, 'ReferenceNotFound');
    assert.match(accepted?.message ?? '', /^spec\.team_id: Team 'ml' is not in the rendered configuration: no Team named 'ml' exists in the watched namespaces; until it is, this key is left out/);
    assert.equal(condition(vk, 'Ready')?.reason, 'NotAccepted');
    assert.equal(vk.status?.reason, 'ReferenceNotFound', 'the REASON column');
    assert.match(await kubectl(['get', '-n', NS, 'vk', 'ml-key']), /\nml-key\s.*\bml\b.*False\s+ReferenceNotFound\s/);
    const event = await waitFor('a Warning Event on the key', async () => {
      const list = await api<{ items: KubeEvent[] }>(`/apis/events.k8s.io/v1/namespaces/${NS}/events`);
      return list?.items.find((e) => e.regarding.kind === 'VirtualKey' && e.regarding.name === 'ml-key' && e.reason === 'ReferenceNotFound');
    });
    assert.equal(event.type, 'Warning');
    assert.match(event.note, /Team 'ml' is not in the rendered configuration/);
    // The rule scoped to the team is left out too, saying why; the Customer is untouched.
    const rule = await judged('routingrules', 'ml-mini', (o) => condition(o, 'Accepted')?.status === 'False');
    assert.match(condition(rule, 'Accepted')?.message ?? '', /^spec\.scope_id: Team 'ml' is not in the rendered configuration/);
    assert.equal(condition(await ready('customers', 'acme'), 'Ready')?.reason, 'Served');
    // Deleting is intent: the render is written, not held.
    const index = await waitFor('the key to leave the rendered configuration', async () => {
      const cm = await api<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/configmaps/skybridge-config-index`);
      const idx = cm && (JSON.parse(cm.data['index.json']) as { managed?: Record<string, string[]> });
      return idx && !idx.managed?.virtual_keys?.includes('ml-key') ? idx : undefined;
    });
    assert.equal(index.managed?.teams, undefined);
    assert.ok(!/render held/.test(operator!.output()), 'the deletion was not held');
    // The proxy refuses the key outright: with the team's limits gone it would have served again.
    mock!.requests.length = 0;
    const refused = await waitFor('the proxy to refuse the key', async () => {
      try {
        await ask();
        return undefined;
      } catch (err) {
        return err instanceof OpenAI.APIError && err.status === 401 ? err : undefined;
      }
    });
    assert.equal(refused.code, 'invalid_virtual_key');
    assert.equal(mock!.requests.filter((r) => r.status === 200).length, 0, 'no request of the key reached the provider');
  });

  test('recreating the Team serves the key again, by itself', { timeout: 5 * 60_000 }, async () => {
    // A bigger budget: the spend so far is remembered under the same id (budget team-ml).
    await apply(team(1));
    const vk = await judged('virtualkeys', 'ml-key', (o) => condition(o, 'Ready')?.status === 'True', 'the key to be served again');
    assert.equal(condition(vk, 'Accepted')?.reason, 'Valid');
    await ready('routingrules', 'ml-mini');
    const answer = await waitFor('the key to be served again', async () => ask().catch(() => undefined));
    assert.match(answer.choices[0].message.content ?? '', /^Mock reply to: /);
  });
});
