// Secrets between custom resources, on a real kube-apiserver with the operator and a proxy following
// it (the chart's RBAC, static-token users): a resource cannot read another's Secret entries through
// an `env.` reference (refused at admission for header values, by the operator for any other field),
// and a VirtualKey with the value of a served one is refused while the served one keeps serving.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, fetch } from 'undici';
import OpenAI from 'openai';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil, kubeconfigFor, condition, type Condition } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { operatorRbac, proxyRbac } from '../helpers/kube-rbac.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

const NS = 'skybridge';
const GROUP_PATH = `/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}`;
const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
const OPENAI_KEY = 'sk-openai-victim-0123456789';
const VK_VALUE = 'sk-bf-checkout-e2e-0001';
/** The Secret entry the operator renders for the openai Provider's first key. */
const OPENAI_ENTRY = 'PROVIDER_SKYBRIDGE_OPENAI_KEYS_0_VALUE';

let kube: KubeApiServer | undefined;
let crds: InstalledCrds | undefined;
let agent: Agent | undefined;
let operator: ChildProcess | undefined;
let operatorOut = '';
let mock: MockProvider | undefined;
let proxy: RunningGateway | undefined;

interface Cr {
  metadata: { name: string; generation?: number };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

const api = <T = Cr>(path: string): Promise<T | undefined> => kubeGet<T>(kube!, agent!, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube!, args, stdin);
const apply = (obj: unknown) => kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify(obj));
const logs = () => [`--- operator ---\n${operatorOut.split('\n').slice(-25).join('\n')}`, `--- proxy ---\n${proxy?.logs().split('\n').slice(-25).join('\n') ?? ''}`].join('\n');
// Generous: two cores shared with other work.
const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> => waitUntil(what, fn, { timeoutMs, everyMs: 200, context: logs });

/** The status of a CR once the operator has judged its current generation. */
const verdict = (plural: string, name: string) =>
  waitFor(`${plural}/${name} to get a verdict`, async () => {
    const o = await api(`${GROUP_PATH}/${plural}/${name}`);
    return o && o.status?.observedGeneration === o.metadata.generation && condition(o, 'Accepted') ? o : undefined;
  });

const openaiProvider = (rev: string) => ({
  apiVersion: 'gateway.skybridge.dev/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'openai', namespace: NS },
  spec: { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'openai' } } }], network_config: { base_url: `${mock!.url}/openai`, max_retries: 0, extra_headers: { 'x-rev': rev } } },
});

const virtualKey = (name: string, key: string, models: string[]) => ({
  apiVersion: 'gateway.skybridge.dev/v1alpha1',
  kind: 'VirtualKey',
  metadata: { name, namespace: NS },
  spec: { valueFrom: { secretKeyRef: { name: 'vk-values', key } }, provider_configs: [{ provider: 'openai', allowed_models: models, key_ids: ['*'] }] },
});

const sdk = (vk?: string) => new OpenAI({ baseURL: `${proxy!.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: vk ? { 'x-bf-vk': vk } : {} });
const ask = async (vk?: string, model = 'openai/gpt-4o') => (await sdk(vk).chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }] })).choices[0].message.content;

/**
 * Changes the openai Provider's x-rev header and waits until an upstream call carries it: from then
 * on the proxy serves a render at least as new as everything applied before.
 */
async function proxyCaughtUp(rev: string): Promise<void> {
  await apply(openaiProvider(rev));
  await waitFor(`the proxy to serve x-rev ${rev}`, async () => {
    mock!.requests.length = 0;
    await ask().catch(() => undefined);
    return mock!.requests.some((r) => r.headers['x-rev'] === rev) || undefined;
  });
}

before(async () => {
  kube = await startKubeApiServer({ users: [{ name: 'skybridge-operator' }, { name: 'skybridge-proxy' }] });
  agent = new Agent({ connect: { ca: kube.ca } });
  mock = await startMockProvider();
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], `${proxyRbac(NS)}\n---${operatorRbac(NS, { servedLeases: true })}`);
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'llm-credentials', namespace: NS }, stringData: { openai: OPENAI_KEY } });
  // Two keys holding one value: what a copied manifest or a reused token looks like.
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'vk-values', namespace: NS }, stringData: { checkout: VK_VALUE, copy: VK_VALUE, spy: 'sk-bf-spy-e2e-0002' } });
  operator = spawn(NODE, [MAIN, '--namespace', NS, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--lease-duration', '5', '--identity', 'op', '--resync-period', '30'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfigFor(kube, 'skybridge-operator'), HOME: kube.stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  operator.stdout!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
  operator.stderr!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
  proxy = await startGateway(undefined, { env: { KUBECONFIG: kubeconfigFor(kube, 'skybridge-proxy'), HOME: kube.stateDir }, args: ['--kube-namespace', NS] });
  await apply(openaiProvider('1'));
  await eventually(async () => assert.equal(await ask(), 'Mock reply to: Hello'), 60_000);
}, { timeout: 30 * 60_000 });

after(async () => {
  await proxy?.stop();
  if (operator && operator.exitCode === null && operator.signalCode === null) {
    const exited = once(operator, 'exit');
    operator.kill('SIGKILL');
    await exited;
  }
  await mock?.close();
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

describe('secrets between custom resources', { concurrency: false }, () => {
  test("a Provider whose extra header names another resource's Secret entry is refused at admission, naming the rule", async () => {
    const collector = {
      apiVersion: 'gateway.skybridge.dev/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'collector', namespace: NS },
      spec: {
        custom_provider_config: { base_provider_type: 'openai', is_key_less: true },
        network_config: { base_url: `${mock!.url}/openai`, extra_headers: { 'x-leak': `env.${OPENAI_ENTRY}` } },
      },
    };
    const r = await kube!.kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify(collector));
    assert.notEqual(r.code, 0, 'the API server admitted it');
    assert.match(r.stderr, /extra_headers.*env\. references are not allowed in custom resources/);
    assert.notEqual((await kube!.kubectl(['get', '-n', NS, 'provider', 'collector'])).code, 0, 'nothing was stored');
  });

  test('an env. reference in a field admission does not check is refused by the operator, naming the field; the key reaches no answer', async () => {
    // A VirtualKey's description is shown by /api: it would have carried the openai key.
    const spy = virtualKey('spy', 'spy', ['*']);
    (spy.spec as Record<string, unknown>).description = `env.${OPENAI_ENTRY}`;
    await apply(spy);
    const o = await verdict('virtualkeys', 'spy');
    const accepted = condition(o, 'Accepted');
    assert.equal(accepted?.status, 'False');
    assert.equal(accepted?.reason, 'InvalidSpec');
    assert.match(accepted?.message ?? '', new RegExp(`^spec\\.description: 'env\\.${OPENAI_ENTRY}' is not allowed: a custom resource cannot name environment variables or entries of the rendered Secret`));
    await proxyCaughtUp('2');
    const answer = await fetch(`${proxy!.url}/api/governance/virtual-keys`);
    const text = await answer.text();
    assert.equal(answer.status, 200, text);
    assert.ok(!text.includes(OPENAI_KEY), 'the openai key is in an /api answer');
    assert.ok(!text.includes('"spy"'), 'the refused key is not served');
    // And the openai Provider itself is untouched: its key still goes to its own upstream.
    assert.equal(mock!.requests.at(-1)?.headers.authorization, `Bearer ${OPENAI_KEY}`);
  });

  test('a VirtualKey with the value of a served one is refused (DuplicateValue, naming it); the served one keeps serving its callers unchanged', async () => {
    await apply(virtualKey('checkout', 'checkout', ['gpt-4o']));
    assert.equal(condition(await verdict('virtualkeys', 'checkout'), 'Accepted')?.reason, 'Valid');
    await eventually(async () => assert.equal(await ask(VK_VALUE), 'Mock reply to: Hello'), 60_000);
    // Sorts before 'checkout' (the name that used to win the value) and allows another model only:
    // callers served as this key would be refused gpt-4o.
    await apply(virtualKey('aaa-copy', 'copy', ['gpt-4o-mini']));
    const copy = await verdict('virtualkeys', 'aaa-copy');
    assert.equal(condition(copy, 'Accepted')?.status, 'False');
    assert.equal(condition(copy, 'Accepted')?.reason, 'DuplicateValue');
    assert.match(condition(copy, 'Accepted')?.message ?? '', new RegExp(`already the value of VirtualKey ${NS}/checkout, which keeps serving it`));
    assert.ok(!condition(copy, 'Accepted')?.message.includes(VK_VALUE), 'the status holds the value');
    await proxyCaughtUp('3');
    const served = await api(`${GROUP_PATH}/virtualkeys/checkout`);
    assert.equal(condition(served, 'Accepted')?.status, 'True');
    assert.equal(condition(served, 'Accepted')?.reason, 'Valid');
    assert.equal(await ask(VK_VALUE), 'Mock reply to: Hello', 'callers are still served as checkout (gpt-4o allowed)');
    const mini = await ask(VK_VALUE, 'openai/gpt-4o-mini').catch((e: unknown) => e);
    assert.ok(mini instanceof OpenAI.APIError && mini.status === 403, `gpt-4o-mini is not checkout's: ${String(mini)}`);
    assert.match(mini.message, /virtual key 'checkout'/, 'the caller is known as checkout');
  });
});
