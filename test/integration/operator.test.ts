// The operator end to end on a real kube-apiserver (test/helpers/kube.ts): CRDs from crds/ and the
// example CRs applied with kubectl, real operator processes, and the rendered ConfigMaps/Secret read
// back and verified the way a proxy does (the proxy's own assembler and config check).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch } from 'undici';
import OpenAI from 'openai';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { operatorRbac } from '../helpers/kube-rbac.ts';
import { startGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { startMockProvider } from '../mock-provider/server.ts';
import { assemble } from '../../proxy/src/config/kube-document.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';

const NS = 'skybridge';
/** A second watched namespace: its CRs render into NS too. */
const TENANTS = 'tenants';
const GROUP_PATH = `/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}`;
const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
const LEASE_SECONDS = 3;

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;

interface KubeObject {
  metadata: { name: string; uid: string; generation?: number; labels?: Record<string, string>; ownerReferences?: { uid: string; name: string }[]; managedFields?: { manager: string; operation: string }[] };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
  status?: { observedGeneration?: number; conditions?: { type: string; status: string; reason: string; message: string; observedGeneration?: number; lastTransitionTime: string }[] };
}

const api = <T = KubeObject>(path: string): Promise<T | undefined> => kubeGet<T>(kube, agent, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);

const apply = (yaml: string) => kubectl(['apply', '-n', NS, '-f', '-'], yaml);

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> =>
  waitUntil(what, fn, { timeoutMs, everyMs: 150, context: () => running.map((o) => `--- ${o.identity} (last lines) ---\n${o.output().split('\n').slice(-30).join('\n')}`).join('\n') });

/** The parts of the rendered document these tests look at. */
interface RenderedDocument {
  providers: Record<string, { keys: { value: string }[]; network_config?: { max_retries?: number }; pricing_overrides?: unknown[] }>;
  governance: { virtual_keys?: { id: string; budget_id?: string; team_id?: string }[]; budgets?: unknown[]; routing_rules?: { id: string }[]; teams?: unknown[]; customers?: unknown[] };
  webhooks?: { name: string; secret?: string }[];
  mcp?: { client_configs: { client_id: string; headers?: Record<string, string> }[] };
  plugins?: { name: string; enabled: boolean }[];
}

/** What a proxy would load: index, parts and Secret verified against their checksums. */
async function rendered() {
  const cms = (await api<{ items: KubeObject[] }>(`/api/v1/namespaces/${NS}/configmaps?labelSelector=skybridge.dev%2Fconfig%3Dtrue`))?.items ?? [];
  const secret = await api(`/api/v1/namespaces/${NS}/secrets/skybridge-secrets`);
  const byName = new Map(cms.map((c) => [c.metadata.name, c]));
  const result = assemble((n) => byName.get(n)?.data, (n) => (n === 'skybridge-secrets' ? secret?.data : undefined));
  if (result.state !== 'complete') return undefined;
  return { ...result, document: result.document as RenderedDocument, configMaps: byName, secret: secret as KubeObject };
}

/** The example's anthropic Provider with another max_retries: an edit that changes the document. */
const anthropic = (maxRetries: number) =>
  JSON.stringify({
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'anthropic' },
    spec: { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'anthropic' } } }], network_config: { max_retries: maxRetries } },
  });

const condition = (o: KubeObject | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

interface Operator {
  identity: string;
  proc: ChildProcess;
  metricsUrl: string;
  output(): string;
  metric(name: string): Promise<number>;
  stop(): Promise<void>;
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: a leader that stops renewing without dying. */
  pause(): void;
  resume(): void;
}

async function startOperator(identity: string, extra: string[] = []): Promise<Operator> {
  const proc = spawn(NODE, [MAIN, '--namespace', NS, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--lease-duration', String(LEASE_SECONDS), '--identity', identity, '--resync-period', '30', '--watch-namespaces', `${NS},${TENANTS}`, '--ready-when', 'rendered', ...extra], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: operatorKubeconfig, HOME: kube.stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const metricsUrl = await waitFor(`operator ${identity} to start`, async () => {
    if (proc.exitCode !== null) throw new Error(`operator exited: ${out}`);
    const line = out.split('\n').find((l) => l.includes('"skybridge operator started"'));
    return line ? (JSON.parse(line) as { metrics: string }).metrics : undefined;
  });
  const exited = once(proc, 'exit');
  const operator: Operator = {
    identity,
    proc,
    metricsUrl,
    output: () => out,
    async metric(name) {
      const text = await (await fetch(metricsUrl)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
      return line ? Number(line.split(' ').at(-1)) : NaN;
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await exited;
    },
    pause: () => proc.kill('SIGSTOP'),
    resume: () => proc.kill('SIGCONT'),
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
  running.push(operator);
  return operator;
}

/** Operators started by this file, for their logs when a wait times out. */
const running: Operator[] = [];

const leaseTransitions = async () => (await api<{ spec: { leaseTransitions?: number } }>(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/skybridge-operator`))?.spec.leaseTransitions ?? 0;
const leaseHolder = async () => (await api<{ spec: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/skybridge-operator`))?.spec.holderIdentity;

/** Least privilege, as charts/skybridge grants it: the operators run as this user, not as admin. */
const RBAC = operatorRbac(NS, { tenants: [TENANTS] });
let operatorKubeconfig: string;

before(async () => {
  kube = await startKubeApiServer({ users: [{ name: 'skybridge-operator' }] });
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['create', 'namespace', TENANTS]);
  await kubectl(['apply', '-f', '-'], RBAC);
  // The admin kubeconfig with the operator user's token instead.
  const config = parse(readFileSync(kube.kubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
  config.users[0].user.token = kube.tokens['skybridge-operator'];
  operatorKubeconfig = join(kube.stateDir, 'operator-kubeconfig');
  writeFileSync(operatorKubeconfig, stringify(config));
}, { timeout: 30 * 60_000 });

after(async () => {
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

describe('operator', { concurrency: false }, () => {
  let a: Operator;
  let b: Operator | undefined;

  before(async () => {
    a = await startOperator('operator-a');
  });
  after(async () => {
    await a?.kill();
    await b?.kill();
  });

  test('the example CRs of every kind render into checksummed ConfigMaps and a Secret, and each reports Ready', async () => {
    await kubectl(['apply', '-n', NS, '-f', `${ROOT}examples/kubernetes/`]);
    // Every example in the render, not only the last ones applied: each kind has a watch of its own,
    // and one can deliver later than another (a key rendered before its Team is seen is left out).
    const examples: Record<string, number> = { providers: 3, virtual_keys: 1, routing_rules: 3, webhooks: 1, mcp_clients: 2, plugins: 1, teams: 1, customers: 1 };
    const r = await waitFor('the examples to render', async () => {
      const got = await rendered();
      return got && Object.entries(examples).every(([section, n]) => (got.index.managed as Record<string, string[] | undefined>)[section]?.length === n) ? got : undefined;
    });
    const doc = r.document;
    // Providers with env references for their keys; the custom one as written.
    assert.deepEqual(Object.keys(doc.providers), ['anthropic', 'corp-llm', 'openai']);
    assert.deepEqual(doc.providers.openai.keys.map((k) => k.value), ['env.PROVIDER_SKYBRIDGE_OPENAI_KEYS_0_VALUE', 'env.PROVIDER_SKYBRIDGE_OPENAI_KEYS_1_VALUE']);
    // The virtual key with its inline budget and rate limit, the rules, and the other kinds' sections.
    assert.equal(doc.governance.virtual_keys?.[0].id, 'checkout');
    assert.equal(doc.governance.virtual_keys?.[0].budget_id, 'vk-checkout');
    assert.deepEqual(doc.governance.budgets, [
      { id: 'customer-acme', max_limit: 5000, reset_duration: '1M', calendar_aligned: true },
      { id: 'team-payments', max_limit: 1000, reset_duration: '1M', calendar_aligned: true },
      { id: 'vk-checkout', max_limit: 100, reset_duration: '1M', calendar_aligned: true },
    ]);
    // The key is in the team, the team under its customer, each with its own limits.
    assert.equal(doc.governance.virtual_keys?.[0].team_id, 'payments');
    assert.deepEqual(doc.governance.teams, [{ id: 'payments', name: 'Payments', customer_id: 'acme', budget_id: 'team-payments', rate_limit_id: 'team-payments', profile: { cost_center: 'CC-4711' } }]);
    assert.deepEqual(doc.governance.customers, [{ id: 'acme', name: 'ACME Corp', budget_id: 'customer-acme', rate_limit_id: 'customer-acme' }]);
    assert.deepEqual(doc.governance.routing_rules?.map((x) => x.id), ['budget-saver', 'payments-classify', 'premium-to-claude']);
    assert.deepEqual(doc.webhooks?.map((w) => [w.name, w.secret]), [['jobs-done', 'env.WEBHOOK_SKYBRIDGE_JOBS_DONE_SECRET']]);
    assert.deepEqual(doc.mcp?.client_configs.map((c) => c.client_id), ['files', 'github']);
    assert.equal(doc.mcp?.client_configs[1].headers?.Authorization, 'env.MCPCLIENT_SKYBRIDGE_GITHUB_HEADER_AUTHORIZATION');
    assert.deepEqual(doc.plugins?.map((p) => [p.name, p.enabled]), [['semantic_cache', true]]);
    // Secrets only in the Secret; the proxy's check accepts the document with them.
    assert.equal(r.env.PROVIDER_SKYBRIDGE_OPENAI_KEYS_1_VALUE, 'sk-replace-me-too');
    assert.equal(r.env.VIRTUALKEY_SKYBRIDGE_CHECKOUT_VALUE, 'sk-bf-checkout-0123456789');
    assert.equal(r.env.MCPCLIENT_SKYBRIDGE_GITHUB_HEADER_AUTHORIZATION, 'Bearer ghp_replace-me');
    for (const cm of r.configMaps.values()) for (const v of Object.values(r.env)) assert.ok(!JSON.stringify(cm.data).includes(v), `${cm.metadata.name} holds a secret`);
    const { config } = checkConfig(r.document, 'rendered', r.env);
    assert.equal(config.providers?.anthropic.keys?.[0].value, 'sk-ant-replace-me');
    // index.json says where each managed object comes from.
    assert.equal(r.index.sources['virtual_keys/checkout'], `VirtualKey ${NS}/checkout`);
    assert.equal(r.index.sources['plugins/semantic_cache'], `CachePolicy ${NS}/response-cache`);
    assert.deepEqual(r.index.managed.providers, ['anthropic', 'corp-llm', 'openai']);
    // Labels, server-side apply by our field manager, parts and Secret owned by the index.
    const index = r.configMaps.get('skybridge-config-index') as KubeObject;
    for (const o of [...r.configMaps.values(), r.secret]) {
      assert.equal(o.metadata.labels?.['app.kubernetes.io/managed-by'], 'skybridge-operator');
      assert.equal(o.metadata.labels?.['skybridge.dev/config'], 'true');
      assert.ok(o.metadata.managedFields?.some((f) => f.manager === 'skybridge-operator' && f.operation === 'Apply'), `${o.metadata.name} applied by skybridge-operator`);
    }
    const owned = await waitFor('parts to name the index as owner', async () => {
      const part = await api(`/api/v1/namespaces/${NS}/configmaps/skybridge-config-part-0`);
      return part?.metadata.ownerReferences?.[0]?.uid === index.metadata.uid ? part : undefined;
    });
    assert.equal(owned.metadata.ownerReferences?.[0].name, 'skybridge-config-index');

    const all = [
      ['providers', 'openai'], ['providers', 'anthropic'], ['providers', 'corp-llm'], ['virtualkeys', 'checkout'], ['routingrules', 'premium-to-claude'],
      ['routingrules', 'budget-saver'], ['routingrules', 'payments-classify'], ['webhooks', 'jobs-done'], ['mcpclients', 'github'], ['mcpclients', 'files'],
      ['cachepolicies', 'response-cache'], ['teams', 'payments'], ['customers', 'acme'],
    ];
    for (const [plural, name] of all) {
      const obj = await waitFor(`${name} to be Ready`, async () => {
        const o = await api(`${GROUP_PATH}/${plural}/${name}`);
        return condition(o, 'Ready')?.status === 'True' ? o : undefined;
      });
      assert.equal(condition(obj, 'Accepted')?.status, 'True');
      assert.equal(condition(obj, 'Accepted')?.reason, 'Valid');
      assert.equal(condition(obj, 'Ready')?.reason, 'Rendered');
      assert.equal(obj.status?.observedGeneration, obj.metadata.generation);
      assert.equal(condition(obj, 'Ready')?.observedGeneration, obj.metadata.generation);
    }
    assert.equal(await a.metric('skybridge_operator_leader'), 1);
    assert.equal(await a.metric('skybridge_operator_resources{kind="Provider",accepted="true"}'), 3);
  });

  test('an edit re-renders, and so does a rotated Secret key', async () => {
    const before = await rendered();
    const statusBefore = await api(`${GROUP_PATH}/providers/anthropic`);
    await sleep(1100); // transition times have seconds precision: a rewrite would show
    const doc = anthropic(5);
    await apply(doc);
    const r = await waitFor('the edit to render', async () => {
      const got = await rendered();
      return got?.document.providers.anthropic.network_config?.max_retries === 5 ? got : undefined;
    });
    assert.notEqual(r.index.revision, before?.index.revision);
    const provider = await waitFor('observedGeneration 2', async () => {
      const o = await api(`${GROUP_PATH}/providers/anthropic`);
      return o?.status?.observedGeneration === 2 ? o : undefined;
    });
    assert.equal(condition(provider, 'Ready')?.status, 'True');
    // Still accepted and ready: no transition, so the times stay.
    for (const type of ['Accepted', 'Ready']) assert.equal(condition(provider, type)?.lastTransitionTime, condition(statusBefore, type)?.lastTransitionTime, type);
    assert.equal(condition(provider, 'Accepted')?.observedGeneration, 2);

    await kubectl(['patch', 'secret', 'llm-credentials', '-n', NS, '--type=merge', '-p', JSON.stringify({ stringData: { 'openai-primary': 'sk-rotated-openai' } })]);
    const rotated = await waitFor('the rotated key to render', async () => {
      const got = await rendered();
      return got?.env.PROVIDER_SKYBRIDGE_OPENAI_KEYS_0_VALUE === 'sk-rotated-openai' ? got : undefined;
    });
    // Only the Secret changed: same document, new secret checksum.
    assert.equal(rotated.index.revision, r.index.revision);
    assert.notEqual(rotated.index.secretChecksum, r.index.secretChecksum);
  });

  test('a deleted CR disappears from the render', async () => {
    await kubectl(['delete', '-n', NS, 'routingrule', 'premium-to-claude']);
    const r = await waitFor('the rule to leave the render', async () => {
      const got = await rendered();
      return got && !got.index.managed.routing_rules?.includes('premium-to-claude') ? got : undefined;
    });
    assert.deepEqual(r.document.governance.routing_rules?.map((x) => x.id), ['budget-saver', 'payments-classify']);
    assert.equal(r.index.sources['routing_rules/premium-to-claude'], undefined);
    assert.ok(r.document.governance.virtual_keys);
  });

  test('a CR naming a missing Secret gets Accepted=False with an actionable message and an Event; the rest still renders', async () => {
    await apply(`
apiVersion: gateway.skybridge.dev/v1alpha1
kind: VirtualKey
metadata:
  name: team-b
spec:
  valueFrom:
    secretKeyRef: { name: team-b-key, key: value }
  provider_configs:
    - provider: openai
      allowed_models: ["*"]
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: Provider
metadata:
  name: groq
spec:
  keys:
    - name: main
      valueFrom:
        secretKeyRef: { name: llm-credentials, key: openai-primary }
`);
    const vk = await waitFor('team-b to be refused', async () => {
      const o = await api(`${GROUP_PATH}/virtualkeys/team-b`);
      return condition(o, 'Accepted')?.status === 'False' ? o : undefined;
    });
    assert.equal(condition(vk, 'Accepted')?.reason, 'SecretNotFound');
    assert.match(condition(vk, 'Accepted')?.message ?? '', /spec\.valueFrom: Secret skybridge\/team-b-key not found/);
    assert.equal(condition(vk, 'Ready')?.status, 'False');
    assert.equal(condition(vk, 'Ready')?.reason, 'NotAccepted');
    // `kubectl get` shows it too (printer columns read the Ready condition).
    assert.match(await kubectl(['get', '-n', NS, 'virtualkey', 'team-b']), /team-b\s.*False/);
    const events = await waitFor('a Warning event', async () => {
      const list = await api<{ items: { reason: string; type: string; note: string; regarding: { name: string; kind: string } }[] }>(`/apis/events.k8s.io/v1/namespaces/${NS}/events`);
      return list?.items.find((e) => e.regarding.name === 'team-b' && e.regarding.kind === 'VirtualKey');
    });
    assert.equal(events.type, 'Warning');
    assert.equal(events.reason, 'SecretNotFound');
    // The valid CR of the same apply is rendered; team-b is not.
    const r = await waitFor('groq to render', async () => {
      const got = await rendered();
      return got?.document.providers.groq ? got : undefined;
    });
    assert.deepEqual(r.index.managed.virtual_keys, ['checkout']);

    // Creating the Secret fixes it: the Secret watch re-renders.
    await sleep(1100);
    await kubectl(['create', 'secret', 'generic', 'team-b-key', '-n', NS, '--from-literal=value=sk-bf-team-b-0001']);
    const fixed = await waitFor('team-b to render', async () => {
      const got = await rendered();
      return got?.index.managed.virtual_keys?.includes('team-b') ? got : undefined;
    });
    assert.equal(fixed.env.VIRTUALKEY_SKYBRIDGE_TEAM_B_VALUE, 'sk-bf-team-b-0001');
    const ok = await waitFor('team-b Accepted', async () => {
      const o = await api(`${GROUP_PATH}/virtualkeys/team-b`);
      return condition(o, 'Ready')?.status === 'True' ? o : undefined;
    });
    assert.equal(condition(ok, 'Accepted')?.reason, 'Valid');
    // False -> True is a transition: its time moved.
    assert.ok(condition(ok, 'Accepted')!.lastTransitionTime > condition(vk, 'Accepted')!.lastTransitionTime);
  });

  test('CRs of another watched namespace render into the target namespace, with their own Secrets', async () => {
    await kubectl(['create', 'secret', 'generic', 'tenant-key', '-n', TENANTS, '--from-literal=value=sk-bf-tenant-0001']);
    await kubectl(['apply', '-n', TENANTS, '-f', '-'], JSON.stringify({ apiVersion: 'gateway.skybridge.dev/v1alpha1', kind: 'VirtualKey', metadata: { name: 'tenant-1' }, spec: { valueFrom: { secretKeyRef: { name: 'tenant-key', key: 'value' } }, provider_configs: [{ provider: 'openai', allowed_models: ['*'] }] } }));
    const r = await waitFor('the tenant key to render', async () => {
      const got = await rendered();
      return got?.index.managed.virtual_keys?.includes('tenant-1') ? got : undefined;
    });
    assert.equal(r.index.sources['virtual_keys/tenant-1'], `VirtualKey ${TENANTS}/tenant-1`);
    assert.equal(r.env.VIRTUALKEY_TENANTS_TENANT_1_VALUE, 'sk-bf-tenant-0001');
    // Nothing is written into the tenant namespace but the CR's status.
    const cms = await api<{ items: KubeObject[] }>(`/api/v1/namespaces/${TENANTS}/configmaps?labelSelector=skybridge.dev%2Fconfig%3Dtrue`);
    assert.deepEqual(cms?.items, []);
    await waitFor('tenant-1 Ready', async () => condition(await api(`/apis/gateway.skybridge.dev/v1alpha1/namespaces/${TENANTS}/virtualkeys/tenant-1`), 'Ready')?.status === 'True' || undefined);
  });

  test('a large configuration is sharded across parts under 1 MiB; stale parts go once the index moves on', async () => {
    const big = (name: string, n: number) =>
      JSON.stringify({
        apiVersion: 'gateway.skybridge.dev/v1alpha1',
        kind: 'Provider',
        metadata: { name },
        spec: {
          keys: [{ name: 'main', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'openai-primary' } } }],
          pricing_overrides: Array.from({ length: n }, (_, i) => ({ model_pattern: `${name}-model-${i}-${'x'.repeat(900)}`, match_type: 'exact', input_cost_per_token: i / 1e6 })),
        },
      });
    // Three providers of ~0.6 MB each: the document is well over one part.
    for (const name of ['mistral', 'deepseek', 'xai']) await kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], big(name, 600));
    const r = await waitFor('the large configuration to render', async () => {
      const got = await rendered();
      return got?.document.providers.xai && got.document.providers.mistral && got.document.providers.deepseek ? got : undefined;
    }, 60_000);
    assert.ok(r.index.parts.length >= 2, `${r.index.parts.length} parts`);
    for (const name of r.index.parts) {
      const size = Buffer.byteLength(r.configMaps.get(name)?.data?.['config.part'] ?? '');
      assert.ok(size > 0 && size <= 900 * 1024, `${name}: ${size} bytes`);
    }
    assert.equal(r.document.providers.xai.pricing_overrides?.length, 600);

    await kubectl(['delete', '-n', NS, 'provider', 'mistral', 'deepseek', 'xai']);
    const small = await waitFor('the configuration to shrink to one part', async () => {
      const got = await rendered();
      return got && got.index.parts.length === 1 && !got.document.providers.xai ? got : undefined;
    }, 60_000);
    assert.deepEqual(small.index.parts, ['skybridge-config-part-0']);
    await waitFor('stale parts to be deleted', async () => !(await api(`/api/v1/namespaces/${NS}/configmaps/skybridge-config-part-1`)) || undefined);
  });

  test('two operators: only the leader writes; kill it and the other takes over within the lease', async () => {
    b = await startOperator('operator-b');
    await waitFor('operator-b to sync', async () => (await fetch(b!.metricsUrl.replace('/metrics', '/readyz'))).status === 200 || undefined);
    assert.equal(await leaseHolder(), 'operator-a');
    // An edit while both run: a renders it, b writes nothing.
    const appliesA = await a.metric('skybridge_operator_applies_total{kind="ConfigMap",action="apply"}');
    await apply(anthropic(6));
    await waitFor('the edit to render', async () => (await rendered())?.document.providers.anthropic.network_config?.max_retries === 6 || undefined);
    assert.ok((await a.metric('skybridge_operator_applies_total{kind="ConfigMap",action="apply"}')) > appliesA);
    assert.equal(await b.metric('skybridge_operator_leader'), 0);
    assert.ok(!(await b.metric('skybridge_operator_applies_total{kind="ConfigMap",action="apply"}') > 0), 'the follower wrote nothing');
    assert.equal(await b.metric('skybridge_operator_reconciles_total{result="success"}'), 0);

    // The leader dies without handing the lease back: b waits out the lease, then leads.
    const killedAt = Date.now();
    await a.kill();
    await waitFor('operator-b to take the lease', async () => (await leaseHolder()) === 'operator-b' || undefined, 15_000);
    const tookMs = Date.now() - killedAt;
    assert.ok(tookMs <= (LEASE_SECONDS + 2) * 1000, `takeover took ${tookMs} ms`);
    await waitFor('operator-b to report leading', async () => (await b!.metric('skybridge_operator_leader')) === 1 || undefined);
    await apply(anthropic(7));
    await waitFor('the new leader to render an edit', async () => (await rendered())?.document.providers.anthropic.network_config?.max_retries === 7 || undefined);
    // A pass is counted once it ends, after the statuses it writes: the render is seen before that.
    await waitFor('the new leader to count a successful pass', async () => (await b!.metric('skybridge_operator_reconciles_total{result="success"}')) > 0 || undefined);

    // A graceful stop hands the lease back at once: a fresh replica leads well before the lease would expire.
    a = await startOperator('operator-c');
    const stoppedAt = Date.now();
    await b.stop();
    await waitFor('operator-c to lead after a graceful handover', async () => (await leaseHolder()) === 'operator-c' || undefined, 10_000);
    assert.ok(Date.now() - stoppedAt < LEASE_SECONDS * 1000 + 1500, 'released lease taken over promptly');
    b = undefined;
  });

  test('a leader that stops renewing (paused) is replaced, and after resuming it writes nothing', async () => {
    const stale = a;
    const next = await startOperator('operator-d');
    await waitFor('operator-d to sync', async () => (await fetch(next.metricsUrl.replace('/metrics', '/readyz'))).status === 200 || undefined);
    stale.pause();
    try {
      const pausedAt = Date.now();
      await waitFor('operator-d to take the lease', async () => (await leaseHolder()) === 'operator-d' || undefined, 15_000);
      assert.ok(Date.now() - pausedAt <= (LEASE_SECONDS + 2) * 1000);
      await apply(anthropic(9));
      await waitFor('the new leader to render', async () => (await rendered())?.document.providers.anthropic.network_config?.max_retries === 9 || undefined);
    } finally {
      stale.resume();
    }
    // Resumed, it still believes it leads until its next renewal attempt; its lease check stops any write meanwhile.
    const appliesBefore = await stale.metric('skybridge_operator_applies_total{kind="ConfigMap",action="apply"}');
    await apply(anthropic(10));
    await waitFor('operator-d to render the change', async () => (await rendered())?.document.providers.anthropic.network_config?.max_retries === 10 || undefined);
    await waitFor('the resumed replica to step down', async () => (await stale.metric('skybridge_operator_leader')) === 0 || undefined);
    assert.equal(await stale.metric('skybridge_operator_applies_total{kind="ConfigMap",action="apply"}'), appliesBefore, 'the stale leader wrote nothing');
    assert.equal(await leaseHolder(), 'operator-d');
    await stale.kill();
    a = next;
  });

  test('after an API server restart the operator recovers and reconciles a change made after it', async (t) => {
    const started = Date.now();
    await kube.restart();
    t.diagnostic(`API server restarted in ${Date.now() - started} ms`);
    const changed = Date.now();
    await apply(anthropic(8));
    await waitFor('the post-restart edit to render', async () => (await rendered())?.document.providers.anthropic.network_config?.max_retries === 8 || undefined, 60_000);
    t.diagnostic(`change rendered ${Date.now() - changed} ms after it was made`);
    const provider = await waitFor('status to follow', async () => {
      const o = await api(`${GROUP_PATH}/providers/anthropic`);
      return o?.status?.observedGeneration === o?.metadata.generation && condition(o, 'Ready')?.status === 'True' ? o : undefined;
    }, 30_000);
    assert.equal(condition(provider, 'Accepted')?.status, 'True');
    assert.equal(await a.metric('skybridge_operator_leader'), 1);
  });
  test('the whole chain: a proxy following the namespace serves the CRs, keys from the Secrets, a RoutingRule CR routes within 2 s, and /api writes name the CR', async () => {
    const mock = await startMockProvider();
    const proxy = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig }, args: ['--kube-namespace', NS] });
    try {
      // Point the example's openai Provider at the mock provider.
      const openai = {
        apiVersion: 'gateway.skybridge.dev/v1alpha1',
        kind: 'Provider',
        metadata: { name: 'openai' },
        spec: { keys: [{ name: 'primary', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'openai-primary' } } }], network_config: { base_url: `${mock.url}/openai` } },
      };
      await apply(JSON.stringify(openai));
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-bf-vk': 'sk-bf-checkout-0123456789' } });
      const ask = async () => (await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Hello' }] })).choices[0].message.content;
      await eventually(async () => assert.equal(await ask(), 'Mock reply to: Hello'), 20_000);
      const upstream = () => [...mock.requests].reverse().find((r) => r.format === 'openai');
      assert.equal(upstream()?.headers.authorization, 'Bearer sk-rotated-openai', 'the key is the Secret value (rotated earlier)');

      // Rotating the Secret reaches the upstream call without touching any CR.
      await kubectl(['patch', 'secret', 'llm-credentials', '-n', NS, '--type=merge', '-p', JSON.stringify({ stringData: { 'openai-primary': 'sk-rotated-again' } })]);
      await eventually(async () => {
        await ask();
        assert.equal(upstream()?.headers.authorization, 'Bearer sk-rotated-again');
      }, 20_000);

      // A virtual key that is not in any CR is refused.
      const refused = await new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-bf-vk': 'sk-bf-nobody-0000' } }).chat.completions
        .create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Hello' }] })
        .catch((e: unknown) => e);
      assert.ok(refused instanceof OpenAI.APIError && refused.status === 401);

      // A RoutingRule CR sends matching requests elsewhere, within 2 s of kubectl apply.
      const anthropic = {
        apiVersion: 'gateway.skybridge.dev/v1alpha1',
        kind: 'Provider',
        metadata: { name: 'anthropic' },
        spec: { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'anthropic' } } }], network_config: { base_url: `${mock.url}/anthropic` } },
      };
      await apply(JSON.stringify(anthropic));
      const rule = {
        apiVersion: 'gateway.skybridge.dev/v1alpha1',
        kind: 'RoutingRule',
        metadata: { name: 'route-to-claude' },
        spec: { cel_expression: 'headers["x-route"] == "claude"', targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }] },
      };
      const routed = async () => {
        const r = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Hello' }] }, { headers: { 'x-route': 'claude' } });
        return (r as unknown as { extra_fields: { provider: string } }).extra_fields.provider;
      };
      assert.equal(await routed(), 'openai', 'no rule yet');
      // The API server restart earlier left watches reconnecting with backoff (up to 15 s after its
      // 429s while starting): wait until a routing-rule change renders again, then time one.
      await apply(JSON.stringify({ ...rule, metadata: { name: 'warm-up' }, spec: { ...rule.spec, enabled: false } }));
      await waitFor('the routing-rule watch to be live', async () => (await rendered())?.index.managed.routing_rules?.includes('warm-up') || undefined, 30_000);
      const transitionsBefore = await leaseTransitions();
      await apply(JSON.stringify(rule));
      const appliedAt = Date.now();
      await eventually(async () => assert.equal(await routed(), 'anthropic'), 20_000);
      const took = Date.now() - appliedAt;
      // Two operators with a 3 s lease run in this suite: on a loaded machine leadership can change
      // hands mid-window, and then the new leader's first reconcile sets the pace.
      const handover = (await leaseTransitions()) !== transitionsBefore;
      assert.ok(took < (handover ? LEASE_SECONDS * 1000 + 2000 : 2000), `the rule took ${took} ms to apply${handover ? ' (leader changed)' : ''}`);
      assert.equal(await ask(), 'Mock reply to: Hello', 'requests the rule does not match keep their target');

      // /api is read-only: a write to a managed object names the CR to edit.
      const res = await fetch(`${proxy.url}/api/providers/openai`, { method: 'DELETE' });
      assert.equal(res.status, 409);
      assert.match(await res.text(), new RegExp(`Provider ${NS}/openai`));
    } finally {
      await proxy.stop();
      await mock.close();
    }
  });
});
