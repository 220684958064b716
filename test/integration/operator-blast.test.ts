// Blast radius, reference checks, the hold rule and Event series, end to end on a real
// kube-apiserver (test/helpers/kube.ts) with the operator running under least-privilege RBAC.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse, stringify } from 'yaml';
import { Agent, fetch } from 'undici';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil, condition, type Condition } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { operatorRbac } from '../helpers/kube-rbac.ts';
import { assemble } from '../../proxy/src/config/kube-document.ts';

const NS = 'blast';
const GROUP_PATH = `/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}`;
const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;
let operatorKubeconfig: string;
let narrowKubeconfig: string;
const operators: { proc: ChildProcess; out: () => string; metricsUrl: string }[] = [];

interface KubeObject {
  metadata: { name: string; uid: string; generation?: number };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}
interface EventObject {
  metadata: { name: string };
  type: string;
  reason: string;
  note: string;
  series?: { count: number };
  regarding: { kind: string; name: string };
}
interface Doc {
  providers?: Record<string, { keys: { name: string }[] }>;
  governance?: { virtual_keys?: { id: string; provider_configs: { provider: string }[] }[]; routing_rules?: { id: string }[] };
}

const api = <T = KubeObject>(path: string): Promise<T | undefined> => kubeGet<T>(kube, agent, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> =>
  waitUntil(what, fn, { timeoutMs, everyMs: 150, context: () => operators.map((o) => o.out().split('\n').slice(-20).join('\n')).join('\n---\n') });

async function rendered() {
  const cms = (await api<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>(`/api/v1/namespaces/${NS}/configmaps?labelSelector=skybridge.dev%2Fconfig%3Dtrue`))?.items ?? [];
  const secret = await api<{ data?: Record<string, string> }>(`/api/v1/namespaces/${NS}/secrets/skybridge-secrets`);
  const byName = new Map(cms.map((c) => [c.metadata.name, c]));
  const result = assemble((n) => byName.get(n)?.data, (n) => (n === 'skybridge-secrets' ? secret?.data : undefined));
  if (result.state !== 'complete') return undefined;
  return { ...result, document: result.document as Doc };
}

const cr = async (plural: string, name: string) => api(`${GROUP_PATH}/${plural}/${name}`);
const events = async () => (await api<{ items: EventObject[] }>(`/apis/events.k8s.io/v1/namespaces/${NS}/events`))?.items ?? [];

/**
 * The Warning Events once every refused or degraded resource has its own (the operator writes a
 * resource's Event after its status, so a status can be read before its Event exists). With `since`:
 * once each of those, and the index's, has also been counted again after `since` (a new leader's pass).
 */
async function standingWarnings(since?: readonly EventObject[]): Promise<EventObject[] | undefined> {
  const warnings = (await events()).filter((e) => e.type === 'Warning');
  const counted = (e: EventObject) => {
    if (!since) return true;
    const before = since.find((b) => b.metadata.name === e.metadata.name);
    return !before || (e.series?.count ?? 1) > (before.series?.count ?? 1);
  };
  const standing: { kind: string; name: string; reason: string }[] = [];
  for (const [plural, kind] of [['providers', 'Provider'], ['virtualkeys', 'VirtualKey'], ['routingrules', 'RoutingRule']]) {
    for (const o of (await api<{ items: KubeObject[] }>(`${GROUP_PATH}/${plural}`))?.items ?? []) {
      const accepted = condition(o, 'Accepted');
      if (accepted && !(accepted.status === 'True' && accepted.reason === 'Valid')) standing.push({ kind, name: o.metadata.name, reason: accepted.reason });
    }
  }
  // A held render: one Event on the index (Ready=False RenderHeld on the resources says so).
  if (condition(await cr('providers', 'openai'), 'Ready')?.reason === 'RenderHeld') standing.push({ kind: 'ConfigMap', name: 'skybridge-config-index', reason: 'RenderHeld' });
  const all = standing.every((p) => warnings.some((e) => e.regarding.kind === p.kind && e.regarding.name === p.name && e.reason === p.reason && counted(e)));
  return all ? warnings : undefined;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}

async function startOperator(identity: string, leaseSeconds = 3, extra: string[] = [], namespace = NS, kubeconfig = operatorKubeconfig) {
  const proc = spawn(NODE, [MAIN, '--namespace', namespace, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--lease-duration', String(leaseSeconds), '--identity', identity, '--resync-period', '30', '--ready-when', 'rendered', ...extra], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: kube.stateDir },
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
  const o = { proc, out: () => out, metricsUrl };
  operators.push(o);
  return o;
}

async function kill(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  proc.kill('SIGKILL');
  await exited;
}

const RBAC = operatorRbac(NS);

/** The chart's Role with operator.secrets.names: [creds]: no Secret read beyond those names. */
const NARROW = 'narrow';
const NARROW_RBAC = RBAC.replaceAll(`namespace: ${NS}`, `namespace: ${NARROW}`)
  .replace('name: skybridge-operator }]', 'name: narrow-operator }]')
  .replace(
    `  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch, create]`,
    `  - apiGroups: [""]
    resources: [secrets]
    verbs: [create]
  - apiGroups: [""]
    resources: [secrets]
    resourceNames: [skybridge-secrets, skybridge-secrets-1, skybridge-secrets-2, skybridge-secrets-3, creds]
    verbs: [get, list, watch]`,
  );

const SECRET = `
apiVersion: v1
kind: Secret
metadata: { name: creds }
stringData: { openai: sk-openai-1, openai-2: sk-openai-2, anthropic: sk-ant-1, vk: sk-bf-checkout-0001 }
`;

const RESOURCES = `
apiVersion: gateway.skybridge.dev/v1alpha1
kind: Provider
metadata: { name: openai }
spec:
  keys:
    - { name: primary, valueFrom: { secretKeyRef: { name: creds, key: openai } } }
    - { name: secondary, valueFrom: { secretKeyRef: { name: creds, key: openai-2 } } }
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: Provider
metadata: { name: anthropic }
spec:
  keys:
    - { name: main, valueFrom: { secretKeyRef: { name: creds, key: anthropic } } }
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: VirtualKey
metadata: { name: checkout }
spec:
  valueFrom: { secretKeyRef: { name: creds, key: vk } }
  provider_configs:
    - { provider: openai, allowed_models: ['*'], key_ids: ['*'] }
    - { provider: anthropic, allowed_models: ['*'], key_ids: ['*'] }
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: RoutingRule
metadata: { name: to-anthropic }
spec:
  cel_expression: model == "fast"
  targets: [{ provider: anthropic, model: claude-haiku-4-5, weight: 1 }]
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: RoutingRule
metadata: { name: to-groq }
spec:
  cel_expression: model == "cheap"
  targets: [{ provider: groq, model: llama, weight: 1 }]
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: RoutingRule
metadata: { name: for-ghost }
spec:
  scope: virtual_key
  scope_id: ghost
  targets: [{ provider: openai, weight: 1 }]
`;

before(async () => {
  kube = await startKubeApiServer({ users: [{ name: 'skybridge-operator' }, { name: 'narrow-operator' }] });
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], RBAC);
  await kubectl(['create', 'namespace', NARROW]);
  await kubectl(['apply', '-f', '-'], NARROW_RBAC);
  const config = parse(readFileSync(kube.kubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
  config.users[0].user.token = kube.tokens['skybridge-operator'];
  operatorKubeconfig = join(kube.stateDir, 'operator-kubeconfig');
  writeFileSync(operatorKubeconfig, stringify(config));
  config.users[0].user.token = kube.tokens['narrow-operator'];
  narrowKubeconfig = join(kube.stateDir, 'narrow-kubeconfig');
  writeFileSync(narrowKubeconfig, stringify(config));
}, { timeout: 30 * 60_000 });

after(async () => {
  for (const o of operators) await kill(o.proc);
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

test('reference checks, blast radius, the hold rule and Event series on a real API server', { timeout: 5 * 60_000 }, async (t) => {
  let op = await startOperator('blast-a');
  await kubectl(['apply', '-n', NS, '-f', '-'], SECRET);
  await kubectl(['apply', '-n', NS, '-f', '-'], RESOURCES);

  await t.test('a RoutingRule targeting an undefined provider, or scoped to a missing VirtualKey, is refused and not rendered', async () => {
    const groq = await waitFor('to-groq refused', async () => {
      const o = await cr('routingrules', 'to-groq');
      return condition(o, 'Accepted')?.status === 'False' ? o : undefined;
    });
    assert.equal(condition(groq, 'Accepted')?.reason, 'ReferenceNotFound');
    assert.match(condition(groq, 'Accepted')?.message ?? '', /spec\.targets\[0\]\.provider: provider 'groq' is not defined by any Provider/);
    assert.equal(condition(groq, 'Ready')?.status, 'False');
    const ghost = await waitFor('for-ghost refused', async () => condition(await cr('routingrules', 'for-ghost'), 'Accepted')?.status === 'False' && (await cr('routingrules', 'for-ghost')));
    assert.match(condition(ghost, 'Accepted')?.message ?? '', /spec\.scope_id: virtual key 'ghost' is not defined/);
    const r = await waitFor('the render', async () => {
      const got = await rendered();
      return got?.document.governance?.routing_rules?.length ? got : undefined;
    });
    assert.deepEqual(r.document.governance?.routing_rules?.map((x) => x.id), ['to-anthropic']);
    // kubectl shows the reason (printer column) and describe shows the Event.
    const warned = await waitFor('a Warning Event for to-groq', async () => (await events()).find((e) => e.regarding.name === 'to-groq'));
    assert.equal(warned.type, 'Warning');
    assert.equal(warned.reason, 'ReferenceNotFound');
  });

  await t.test('removing one key from the Secret drops only that provider key: the provider and the VirtualKey keep serving', async () => {
    await kubectl(['patch', 'secret', 'creds', '-n', NS, '--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/data/openai-2' }])]);
    const r = await waitFor('openai to render with one key', async () => {
      const got = await rendered();
      return got?.document.providers?.openai?.keys.length === 1 ? got : undefined;
    });
    assert.deepEqual(r.document.providers?.openai.keys.map((k) => k.name), ['primary']);
    assert.deepEqual(r.document.governance?.virtual_keys?.map((v) => v.id), ['checkout']);
    const openai = await waitFor('openai Degraded', async () => {
      const o = await cr('providers', 'openai');
      return condition(o, 'Accepted')?.reason === 'Degraded' ? o : undefined;
    });
    assert.equal(condition(openai, 'Accepted')?.status, 'True');
    assert.match(condition(openai, 'Accepted')?.message ?? '', /spec\.keys\[1\]\.valueFrom: Secret blast\/creds has no key 'openai-2'/);
    assert.equal(condition(openai, 'Ready')?.status, 'True');
  });

  await t.test('deleting one Provider keeps the VirtualKey with its other provider, and its status says which part is degraded', async () => {
    await kubectl(['delete', '-n', NS, 'provider', 'anthropic']);
    const r = await waitFor('anthropic to leave the render', async () => {
      const got = await rendered();
      return got && !got.document.providers?.anthropic ? got : undefined;
    });
    assert.deepEqual(r.document.governance?.virtual_keys?.[0].provider_configs.map((p) => p.provider), ['openai']);
    // The rule that targeted anthropic leaves the render too, rather than routing into errors.
    assert.equal(r.document.governance?.routing_rules, undefined);
    const vk = await waitFor('checkout Degraded', async () => {
      const o = await cr('virtualkeys', 'checkout');
      return condition(o, 'Accepted')?.reason === 'Degraded' ? o : undefined;
    });
    assert.equal(condition(vk, 'Ready')?.status, 'True');
    assert.match(condition(vk, 'Accepted')?.message ?? '', /spec\.provider_configs\[1\]\.provider: provider 'anthropic' is not configured/);
    // Statuses are written concurrently: the rule's may land after the key's.
    await waitFor('to-anthropic ReferenceNotFound', async () => {
      const o = await cr('routingrules', 'to-anthropic');
      return condition(o, 'Accepted')?.reason === 'ReferenceNotFound' ? o : undefined;
    });
  });

  let heldRevision = '';
  await t.test('deleting the referenced Secret does not empty the configuration: the render is held, with a condition, a metric and an Event', async () => {
    const before = (await rendered())!;
    heldRevision = before.index.revision;
    await kubectl(['delete', 'secret', 'creds', '-n', NS]);
    const openai = await waitFor('openai refused, and Ready=False RenderHeld', async () => {
      const o = await cr('providers', 'openai');
      return condition(o, 'Ready')?.reason === 'RenderHeld' ? o : undefined;
    });
    assert.equal(condition(openai, 'Accepted')?.reason, 'SecretNotFound');
    assert.match(condition(openai, 'Ready')?.message ?? '', /keep serving the last good configuration.*would remove every provider/);
    assert.equal(await metric(op.metricsUrl, 'skybridge_operator_render_held'), 1);
    const held = await waitFor('a RenderHeld Event on the index', async () => (await events()).find((e) => e.reason === 'RenderHeld' && e.regarding.name === 'skybridge-config-index'));
    assert.equal(held.type, 'Warning');
    // What the proxies load is unchanged.
    await sleep(1000);
    const still = (await rendered())!;
    assert.equal(still.index.revision, heldRevision);
    assert.deepEqual(Object.keys(still.document.providers ?? {}), ['openai']);
    assert.equal(still.env.VIRTUALKEY_BLAST_CHECKOUT_VALUE, 'sk-bf-checkout-0001');
  });

  await t.test('a new leader with the problem unchanged adds no Event (one series per problem)', async () => {
    // Every standing problem's Event, as the old leader wrote them: the last ones follow their statuses.
    const before = await waitFor('an Event for every standing problem', () => standingWarnings());
    await kill(op.proc);
    op = await startOperator('blast-b');
    await waitFor('blast-b to lead', async () => (await metric(op.metricsUrl, 'skybridge_operator_leader')) === 1 || undefined, 20_000);
    await waitFor('blast-b to hold the render', async () => (await metric(op.metricsUrl, 'skybridge_operator_render_held')) === 1 || undefined);
    // The new leader's pass has met every standing problem (its metric is set before its Events)...
    const heldAt = Date.now();
    await waitFor('blast-b to count every standing problem', () => standingWarnings(before));
    process.stdout.write(`# the new leader counted every standing problem ${Date.now() - heldAt} ms after its held metric\n`);
    // ...and has had time to add an Event it should not.
    await sleep(1500);
    // The same problems, the same Events: at most counted again in their series.
    const afterFailover = (await events()).filter((e) => e.type === 'Warning');
    assert.deepEqual(afterFailover.map((e) => e.metadata.name).sort(), before.map((e) => e.metadata.name).sort());
    assert.ok(afterFailover.some((e) => (e.series?.count ?? 1) >= 2), 'the new leader counted the standing problems');
  });

  await t.test('restoring the Secret releases the hold; a Normal Event says the problem cleared', async () => {
    await kubectl(['apply', '-n', NS, '-f', '-'], SECRET);
    const r = await waitFor('the render to move on', async () => {
      const got = await rendered();
      return got && got.document.providers?.openai?.keys.length === 2 ? got : undefined;
    });
    assert.notEqual(r.index.revision, heldRevision);
    await waitFor('openai Ready again', async () => condition(await cr('providers', 'openai'), 'Ready')?.status === 'True' || undefined);
    assert.equal(await metric(op.metricsUrl, 'skybridge_operator_render_held'), 0);
    const resolved = await waitFor('a Normal Resolved Event on the index', async () => (await events()).find((e) => e.type === 'Normal' && e.reason === 'Resolved' && e.regarding.name === 'skybridge-config-index'));
    assert.match(resolved.note, /written again/);
    // The provider's own problem cleared too; the new leader knew of it (it met the standing Event).
    const fixed = await waitFor('a Normal Resolved Event on the provider', async () => (await events()).find((e) => e.type === 'Normal' && e.reason === 'Resolved' && e.regarding.kind === 'Provider' && e.regarding.name === 'openai'));
    assert.match(fixed.note, /^SecretNotFound no longer applies/);
  });

  await t.test('deleting the last Provider while a VirtualKey names it is intent: not held, the key is refused and leaves too', async () => {
    await kubectl(['delete', '-n', NS, 'provider', 'openai']);
    const r = await waitFor('openai to leave the render', async () => {
      const got = await rendered();
      return got && !got.document.providers?.openai ? got : undefined;
    });
    assert.deepEqual(Object.keys(r.document.providers ?? {}), []);
    assert.equal(r.document.governance?.virtual_keys, undefined);
    assert.equal(r.env.PROVIDER_BLAST_OPENAI_KEYS_0_VALUE, undefined, 'the deleted provider\'s key is no longer served');
    const vk = await waitFor('checkout ReferenceNotFound', async () => {
      const o = await cr('virtualkeys', 'checkout');
      return condition(o, 'Accepted')?.reason === 'ReferenceNotFound' ? o : undefined;
    });
    assert.equal(condition(vk, 'Ready')?.status, 'False');
    assert.notEqual(condition(vk, 'Ready')?.reason, 'RenderHeld');
    assert.equal(await metric(op.metricsUrl, 'skybridge_operator_render_held'), 0);
  });
});

test('with the chart\'s default lease, a killed (SIGKILL) leader is replaced within 10 s', { timeout: 2 * 60_000 }, async () => {
  for (const o of operators.splice(0)) await kill(o.proc);
  const chartLease = Number(/leaseDurationSeconds: (\d+)/.exec(readFileSync(`${ROOT}charts/skybridge/values.yaml`, 'utf8'))?.[1]);
  assert.ok(chartLease > 0);
  const holder = async () => (await api<{ spec: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/skybridge-operator`))?.spec.holderIdentity;
  const first = await startOperator('lease-1', chartLease);
  await waitFor('lease-1 to lead', async () => (await holder()) === 'lease-1' || undefined, 30_000);
  const second = await startOperator('lease-2', chartLease);
  await waitFor('lease-2 to see the leader', async () => second.out().includes('"leader observed"') || undefined);
  await kill(first.proc);
  const killedAt = Date.now();
  await waitFor('lease-2 to take over', async () => (await holder()) === 'lease-2' || undefined, 30_000);
  const failoverMs = Date.now() - killedAt;
  assert.ok(failoverMs <= 10_000, `failover took ${failoverMs} ms`);
  await waitFor('lease-2 to report leading', async () => (await metric(second.metricsUrl, 'skybridge_operator_leader')) === 1 || undefined);
  process.stdout.write(`# failover after SIGKILL: ${failoverMs} ms (lease ${chartLease} s)\n`);
});

test('--secret-names: the operator reads exactly the named Secrets (watched by name, granted by resourceNames)', { timeout: 2 * 60_000 }, async () => {
  // The Role cannot list Secrets: a namespace-wide watch would be forbidden, so rendering proves the per-name watches.
  const denied = await kube.kubectl(['auth', 'can-i', 'list', 'secrets', '-n', NARROW, '--as', 'narrow-operator']);
  assert.equal(denied.stdout.trim(), 'no');
  await kubectl(['apply', '-n', NARROW, '-f', '-'], SECRET);
  await kubectl(['create', 'secret', 'generic', 'other', '-n', NARROW, '--from-literal=vk=sk-bf-other-0001']);
  await kubectl(['apply', '-n', NARROW, '-f', '-'], `
apiVersion: gateway.skybridge.dev/v1alpha1
kind: Provider
metadata: { name: openai }
spec:
  keys: [{ name: primary, valueFrom: { secretKeyRef: { name: creds, key: openai } } }]
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: VirtualKey
metadata: { name: named }
spec:
  valueFrom: { secretKeyRef: { name: creds, key: vk } }
  provider_configs: [{ provider: openai, allowed_models: ['*'] }]
---
apiVersion: gateway.skybridge.dev/v1alpha1
kind: VirtualKey
metadata: { name: unnamed }
spec:
  valueFrom: { secretKeyRef: { name: other, key: vk } }
  provider_configs: [{ provider: openai, allowed_models: ['*'] }]
`);
  const op = await startOperator('narrow-a', 3, ['--secret-names', 'creds'], NARROW, narrowKubeconfig);
  const path = `/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NARROW}/virtualkeys`;
  await waitFor('the named Secret to render', async () => condition(await api(`${path}/named`), 'Ready')?.status === 'True' || undefined);
  const unnamed = await waitFor('the other Secret to be refused', async () => {
    const o = await api(`${path}/unnamed`);
    return condition(o, 'Accepted')?.reason === 'SecretNotFound' ? o : undefined;
  });
  assert.match(condition(unnamed, 'Accepted')?.message ?? '', /Secret narrow\/other not found \(the operator reads only the Secrets named creds\)/);
  assert.doesNotMatch(op.out(), /\b403\b|forbidden/i, 'no watch or read was refused by RBAC');
});
