// Ready means served, on a real kube-apiserver: two proxies (--kube-namespace) each renew a Lease
// reporting the revision they serve, and the operator's Ready condition counts them. A change is
// Ready only once every live proxy serves it; a stopped proxy (SIGSTOP: it stops renewing without
// saying so) drops out of the count when its lease expires, and one shutting down drops out at once.
// A kind the proxies do not act on never reports Ready. MCPClient status carries what the proxies
// report of their MCP connections (Connected, toolCount, lastError without secrets). A refused resource
// (a CEL type error, an MCP URL with credentials) says why and shows SERVED 0/N. A Provider whose
// InferencePool the proxies cannot use carries their reason (InferencePool=False). Everything runs
// with the chart's RBAC for the proxies and the operator, as static-token users.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch } from 'undici';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil, kubeconfigFor as kubeconfigForUser } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';
import { operatorRbac, proxyRbac } from '../helpers/kube-rbac.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';

const NS = 'skybridge';
const GROUP_PATH = `/apis/gateway.skybridge.dev/v1alpha1/namespaces/${NS}`;
const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;
/** The proxies' served-report lease: renewed every third of it. */
const SERVED_LEASE_SECONDS = 4;
/** A credential a broken MCP server prints; it must never reach a status. */
const LEAKED = 'sk-live-0123456789abcdefLEAK';

let kube: KubeApiServer;
let crds: InstalledCrds | undefined;
let agent: Agent;
let operator: ChildProcess | undefined;
let operatorOut = '';
const proxies: Record<string, RunningGateway> = {};

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}
interface Cr {
  metadata: { name: string; generation?: number };
  status?: { observedGeneration?: number; reason?: string; served?: string; servedReplicas?: number; replicas?: number; toolCount?: number; lastError?: string; conditions?: Condition[] };
}

const api = <T = Cr>(path: string): Promise<T | undefined> => kubeGet<T>(kube, agent, path);
const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube, args, stdin);

const apply = (obj: unknown) => kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify(obj));
const condition = (o: Cr | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

function logs(): string {
  const tail = (s: string) => s.split('\n').slice(-25).join('\n');
  return [`--- operator ---\n${tail(operatorOut)}`, ...Object.entries(proxies).map(([n, p]) => `--- ${n} ---\n${tail(p.logs())}`)].join('\n');
}

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> => waitUntil(what, fn, { timeoutMs, context: logs });

/** The chart's Roles (charts/skybridge/templates/*-rbac.yaml), for static-token users. */
const RBAC = `${proxyRbac(NS)}\n---${operatorRbac(NS, { servedLeases: true })}`;

const kubeconfigFor = (user: string): string => kubeconfigForUser(kube, user);

let proxyKubeconfig: string;

async function startProxy(name: string, env: NodeJS.ProcessEnv = {}): Promise<RunningGateway> {
  const p = await startGateway(undefined, {
    env: { KUBECONFIG: proxyKubeconfig, HOME: kube.stateDir, POD_NAME: name, SKYBRIDGE_SERVED_LEASE_SECONDS: String(SERVED_LEASE_SECONDS), ...env },
    args: ['--kube-namespace', NS],
  });
  proxies[name] = p;
  return p;
}

const provider = (maxRetries: number) => ({
  apiVersion: 'gateway.skybridge.dev/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'openai', namespace: NS },
  spec: { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'openai' } } }], network_config: { max_retries: maxRetries } },
});

/** What a proxy serves for the openai provider right now (its /api view). */
async function servedRetries(p: RunningGateway): Promise<number | undefined> {
  const res = await fetch(`${p.url}/api/providers/openai`);
  if (!res.ok) return undefined;
  const m = /"max_retries":(\d+)/.exec(await res.text());
  return m ? Number(m[1]) : undefined;
}

before(async () => {
  kube = await startKubeApiServer({ users: [{ name: 'skybridge-operator' }, { name: 'skybridge-proxy' }] });
  agent = new Agent({ connect: { ca: kube.ca } });
  crds = await installCrds(kube);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], RBAC);
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'llm-credentials', namespace: NS }, stringData: { openai: 'sk-openai-test-1', hook: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=' } });
  proxyKubeconfig = kubeconfigFor('skybridge-proxy');
  operator = spawn(NODE, [MAIN, '--namespace', NS, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--lease-duration', '3', '--identity', 'op', '--resync-period', '30'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfigFor('skybridge-operator'), HOME: kube.stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  operator.stdout!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
  operator.stderr!.on('data', (d: Buffer) => (operatorOut = (operatorOut + d.toString()).slice(-50_000)));
  await Promise.all([startProxy('proxy-a'), startProxy('proxy-b')]);
}, { timeout: 30 * 60_000 });

after(async () => {
  for (const p of Object.values(proxies)) {
    p.process.kill('SIGCONT');
    await p.stop();
  }
  if (operator && operator.exitCode === null) {
    const exited = once(operator, 'exit');
    operator.kill('SIGKILL');
    await exited;
  }
  await agent?.close();
  await kube?.stop();
  await crds?.close();
});

describe('Ready means served', { concurrency: false }, () => {
  test('each proxy reports what it serves in a Lease; Ready=True once both serve the Provider', { timeout: 60_000 }, async () => {
    await apply(provider(1));
    const cr = await waitFor('openai served by both proxies', async () => {
      const o = await api(`${GROUP_PATH}/providers/openai`);
      return condition(o, 'Ready')?.status === 'True' ? o : undefined;
    });
    assert.equal(condition(cr, 'Ready')?.reason, 'Served');
    assert.equal(condition(cr, 'Ready')?.message, 'Served by all 2 proxy replicas.');
    assert.equal(cr.status?.served, '2/2');
    assert.equal(cr.status?.servedReplicas, 2);
    assert.equal(cr.status?.replicas, 2);
    assert.equal(cr.status?.reason, 'Served');
    // Both proxies really serve it.
    for (const p of Object.values(proxies)) assert.equal(await servedRetries(p), 1);
    // One Lease per proxy, named after it, with the revision the index names.
    const index = JSON.parse((await api<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/configmaps/skybridge-config-index`))!.data['index.json']) as { revision: string };
    for (const name of ['proxy-a', 'proxy-b']) {
      const lease = await api<{ metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { holderIdentity: string; leaseDurationSeconds: number } }>(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${name}`);
      assert.ok(lease, `lease ${name}`);
      assert.equal(lease.metadata.labels['skybridge.dev/served-report'], 'true');
      assert.equal(lease.spec.leaseDurationSeconds, SERVED_LEASE_SECONDS);
      const report = JSON.parse(lease.metadata.annotations['skybridge.dev/served']) as { revision: string; sections: string[] };
      assert.equal(report.revision, index.revision);
      assert.ok(report.sections.includes('providers'));
      assert.ok(!report.sections.includes('webhooks'), 'no logs store: the proxy does not act on webhooks');
    }
  });

  test('a change is Ready only once every live proxy serves it; a stopped proxy drops out when its lease expires', { timeout: 90_000 }, async () => {
    const b = proxies['proxy-b'];
    b.process.kill('SIGSTOP');
    const stoppedAt = Date.now();
    try {
      await apply(provider(2));
      const seen: { ready: string; reason: string; served?: string; at: number }[] = [];
      let aServedWhenReady: number | undefined;
      const done = await waitFor('the change Ready without the stopped proxy', async () => {
        const o = await api(`${GROUP_PATH}/providers/openai`);
        if (o?.status?.observedGeneration !== o?.metadata.generation) return undefined;
        const ready = condition(o, 'Ready');
        if (!ready) return undefined;
        const last = seen.at(-1);
        if (!last || last.ready !== ready.status || last.served !== o?.status?.served) seen.push({ ready: ready.status, reason: ready.reason, served: o?.status?.served, at: Date.now() - stoppedAt });
        if (ready.status !== 'True') return undefined;
        aServedWhenReady = await servedRetries(proxies['proxy-a']);
        return o;
      }, 30_000);
      const droppedMs = Date.now() - stoppedAt;
      process.stdout.write(`# states seen for the change: ${JSON.stringify(seen)}; the stopped proxy dropped out after ${droppedMs} ms (lease ${SERVED_LEASE_SECONDS} s)\n`);
      // While the stopped proxy's lease was live, the change was served by one of two: not Ready.
      assert.ok(seen.some((s) => s.ready === 'False' && s.reason === 'Propagating' && s.served === '1/2'), JSON.stringify(seen));
      assert.ok(!seen.some((s) => s.ready === 'True' && s.served !== '1/1'), `never Ready while the stopped proxy still counted: ${JSON.stringify(seen)}`);
      assert.equal(condition(done, 'Ready')?.message, 'Served by the one live proxy replica.');
      assert.equal(done.status?.served, '1/1');
      assert.equal(aServedWhenReady, 2, 'the proxy counted as serving really serves the change');
      // Dropped once its lease ran out (renewals every third of it), not before and not much later.
      assert.ok(droppedMs >= (SERVED_LEASE_SECONDS * 1000 * 2) / 3 - 500, `dropped after ${droppedMs} ms`);
      assert.ok(droppedMs <= SERVED_LEASE_SECONDS * 1000 + 3000, `dropped after ${droppedMs} ms`);
    } finally {
      b.process.kill('SIGCONT');
    }
    // Back: it renews, loads the change and counts again.
    await waitFor('the resumed proxy to count again', async () => {
      const o = await api(`${GROUP_PATH}/providers/openai`);
      return o?.status?.served === '2/2' && condition(o, 'Ready')?.status === 'True' ? o : undefined;
    });
    assert.equal(await servedRetries(b), 2);
  });

  test('a proxy shutting down deletes its Lease and drops out at once', { timeout: 60_000 }, async () => {
    const started = Date.now();
    try {
      await proxies['proxy-b'].stop();
      await waitFor('proxy-b lease deleted', async () => (await api(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/proxy-b`)) === undefined || undefined, 5_000);
      const o = await waitFor('openai counted on one proxy', async () => {
        const cr = await api(`${GROUP_PATH}/providers/openai`);
        return cr?.status?.served === '1/1' ? cr : undefined;
      }, 10_000);
      const ms = Date.now() - started;
      process.stdout.write(`# a stopping proxy left the count after ${ms} ms\n`);
      assert.ok(ms < SERVED_LEASE_SECONDS * 1000, `left after ${ms} ms, sooner than its lease would expire`);
      assert.equal(condition(o, 'Ready')?.status, 'True');
    } finally {
      await startProxy('proxy-b');
    }
    await waitFor('two proxies again', async () => (await api(`${GROUP_PATH}/providers/openai`))?.status?.served === '2/2' || undefined);
  });

  test('a kind the proxies do not act on never reports Ready (Webhook without a logs store)', { timeout: 60_000 }, async () => {
    await apply({
      apiVersion: 'gateway.skybridge.dev/v1alpha1',
      kind: 'Webhook',
      metadata: { name: 'jobs', namespace: NS },
      spec: { url: 'https://hooks.example.com/skybridge', events: ['async_job.completed'], secretFrom: { secretKeyRef: { name: 'llm-credentials', key: 'hook' } } },
    });
    const o = await waitFor('the webhook status', async () => {
      const cr = await api(`${GROUP_PATH}/webhooks/jobs`);
      return condition(cr, 'Ready')?.reason === 'NotImplemented' ? cr : undefined;
    });
    assert.equal(condition(o, 'Accepted')?.status, 'True');
    assert.equal(condition(o, 'Ready')?.status, 'False');
    assert.match(condition(o, 'Ready')?.message ?? '', /none of the 2 proxy replicas acts on Webhook resources.*logsStore/);
    assert.equal(o.status?.served, '0/2');
    // It stays that way (nothing flips it to True on later passes).
    await sleep(1500);
    assert.equal(condition(await api(`${GROUP_PATH}/webhooks/jobs`), 'Ready')?.status, 'False');
    // The printer columns show the actionable reason and the count, no JSON.
    const table = await kubectl(['get', 'webhooks', '-n', NS]);
    process.stdout.write(`${table.trimEnd().replace(/^/gm, '# ')}\n`);
    assert.match(table, /NAME\s+URL\s+DISABLED\s+READY\s+REASON\s+SERVED\s+AGE/);
    assert.match(table, /jobs\s+https:\/\/hooks\.example\.com\/skybridge\s+(<none>\s+)?False\s+NotImplemented\s+0\/2/);
  });

  test('MCPClient status: Connected with the tool count, or the connection error without secrets', { timeout: 90_000 }, async () => {
    const mcp = (name: string, stdio: { command: string; args: string[] }) => ({
      apiVersion: 'gateway.skybridge.dev/v1alpha1',
      kind: 'MCPClient',
      metadata: { name, namespace: NS },
      spec: { connection_type: 'stdio', stdio_config: stdio, tools_to_execute: ['*'] },
    });
    await apply(mcp('tools', { command: process.execPath, args: [STDIO_SERVER, 'basic'] }));
    // A server that prints a credential and exits: the proxies report the failure, scrubbed.
    await apply(mcp('broken', { command: process.execPath, args: ['-e', `process.stderr.write('auth failed for token ${LEAKED}\\n'); process.exit(3)`] }));
    const ok = await waitFor('tools connected on both proxies', async () => {
      const cr = await api(`${GROUP_PATH}/mcpclients/tools`);
      return condition(cr, 'Connected')?.status === 'True' && condition(cr, 'Ready')?.status === 'True' ? cr : undefined;
    }, 40_000);
    assert.equal(condition(ok, 'Connected')?.reason, 'Connected');
    assert.equal(condition(ok, 'Connected')?.message, 'Connected on all 2 proxy replicas.');
    const listed = (await (await fetch(`${proxies['proxy-a'].url}/api/mcp/clients`)).json()) as { config: { client_id?: string; name: string }; tools: unknown[] }[];
    const tools = listed.find((c) => c.config.name === 'tools')?.tools.length;
    assert.ok(tools && tools > 0, 'the proxy lists the server\'s tools');
    assert.equal(ok.status?.toolCount, tools);
    assert.equal(ok.status?.lastError, undefined);

    // Connected=False comes with the first replica that reports the failure, while the other may not
    // serve the client yet (Ready=False Propagating, 1/2): wait for both to serve it as well.
    const bad = await waitFor('broken reported and served by both proxies', async () => {
      const cr = await api(`${GROUP_PATH}/mcpclients/broken`);
      return condition(cr, 'Connected')?.status === 'False' && condition(cr, 'Ready')?.status === 'True' ? cr : undefined;
    }, 40_000);
    const connected = condition(bad, 'Connected')!;
    assert.equal(connected.reason, 'ConnectionFailed');
    assert.match(connected.message, /^proxy-[ab]: /);
    assert.equal(bad.status?.reason, 'ConnectionFailed', 'the actionable reason, though the client is rendered and served');
    assert.ok(bad.status?.lastError, 'lastError set');
    assert.match(bad.status!.lastError!, /auth failed for token \[redacted\]/);
    // (The spec holds it, as the command's argument: only what the proxies and the operator report counts.)
    const everything = JSON.stringify(bad.status) + (await kubectl(['get', 'leases', '-n', NS, '-o', 'json'])) + (await kubectl(['get', 'events', '-n', NS, '-o', 'json']));
    assert.ok(!everything.includes(LEAKED), 'the credential is in no status and no report');
    // The table is another reading, made after the one above: waited for too (the last one tried is in the error).
    const table = await waitFor('kubectl get mcpclients to show both clients', async () => {
      const t = await kubectl(['get', 'mcpclients', '-n', NS]);
      assert.match(t, new RegExp(`tools\\s+stdio\\s+(<none>\\s+)?True\\s+${tools}\\s+True\\s+Served\\s+2/2`));
      assert.match(t, /broken\s+stdio\s+(<none>\s+)?False\s+(<none>\s+)?True\s+ConnectionFailed\s+2\/2/);
      return t;
    });
    process.stdout.write(`${table.trimEnd().replace(/^/gm, '# ')}\n`);
  });

  test('a RoutingRule whose CEL does not type-check is refused as a type error, and a refused resource shows SERVED 0/2', { timeout: 60_000 }, async () => {
    await apply({
      apiVersion: 'gateway.skybridge.dev/v1alpha1',
      kind: 'RoutingRule',
      metadata: { name: 'typed', namespace: NS },
      // Parses, but an int compared with a string does not type-check.
      spec: { cel_expression: '1 == "one"', targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }] },
    });
    const o = await waitFor('the rule refused', async () => {
      const cr = await api(`${GROUP_PATH}/routingrules/typed`);
      return cr?.status?.served !== undefined && condition(cr, 'Ready')?.status === 'False' ? cr : undefined;
    });
    const refused = [condition(o, 'Accepted'), condition(o, 'Ready')].find((c) => c?.status === 'False')!;
    assert.match(refused.message, /CEL type check failed/, 'named a type error');
    assert.doesNotMatch(refused.message, /invalid CEL syntax/);
    assert.equal(o.status?.served, '0/2', 'no replica serves a refused generation');
    const table = await kubectl(['get', 'routingrules', '-n', NS]);
    process.stdout.write(`${table.trimEnd().replace(/^/gm, '# ')}\n`);
    assert.match(table, /typed\s.*\s0\/2\s/);
  });

  test('an MCPClient URL carrying credentials is refused naming the field, and the credential reaches no status, Event or proxy log', { timeout: 60_000 }, async () => {
    const secret = 'hunter2-url-secret';
    await apply({
      apiVersion: 'gateway.skybridge.dev/v1alpha1',
      kind: 'MCPClient',
      metadata: { name: 'creds-in-url', namespace: NS },
      spec: { connection_type: 'http', connection_string: `https://admin:${secret}@mcp.example.com/mcp`, tools_to_execute: ['*'] },
    });
    // The API server stores it (its schema checks shapes only); the operator refuses it.
    const cr = await waitFor('the client refused', async () => {
      const c = await api(`${GROUP_PATH}/mcpclients/creds-in-url`);
      return condition(c, 'Accepted')?.status === 'False' ? c : undefined;
    });
    assert.match(condition(cr, 'Accepted')!.message, /connection_string.*must not carry credentials/);
    assert.equal(cr.status?.served, '0/2');
    await sleep(1000);
    const places: Record<string, string> = {
      status: JSON.stringify((await api(`${GROUP_PATH}/mcpclients/creds-in-url`))?.status ?? {}),
      events: await kubectl(['get', 'events', '-n', NS, '-o', 'json']),
      operator: operatorOut,
      ...Object.fromEntries(Object.entries(proxies).map(([n, p]) => [n, p.logs()])),
    };
    const leaked = Object.entries(places).filter(([, text]) => text.includes(secret)).map(([where, text]) => `${where}: ${text.slice(Math.max(0, text.indexOf(secret) - 300), text.indexOf(secret) + 100)}`);
    assert.deepEqual(leaked, [], 'the URL credential is in no status, Event or log');
  });

  test('a Webhook whose deliveries a proxy gives up on is not Delivering: its status says why and a Warning Event is recorded', { timeout: 90_000 }, async () => {
    // A receiver that always fails, and a proxy with a logs store (where deliveries live).
    const receiver = createServer((_req, res) => res.writeHead(503).end('down for maintenance'));
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const dir = mkdtempSync(join(tmpdir(), 'skybridge-served-logs-'));
    try {
      // Management auth on: test deliveries to a private-network receiver need it.
      const adminKey = 'sb-admin-served-test-key-0001';
      const admin = { 'x-api-key': adminKey };
      const withLogs = await startProxy('proxy-c', { SKYBRIDGE_LOGS_STORE_TYPE: 'sqlite', SKYBRIDGE_LOGS_STORE_PATH: join(dir, 'logs.db'), SKYBRIDGE_ADMIN_API_KEYS: adminKey });
      await apply({
        apiVersion: 'gateway.skybridge.dev/v1alpha1',
        kind: 'Webhook',
        metadata: { name: 'flaky', namespace: NS },
        spec: {
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
          events: ['async_job.completed'],
          allow_private_network: true,
          max_retries: 0,
          secretFrom: { secretKeyRef: { name: 'llm-credentials', key: 'hook' } },
        },
      });
      await waitFor('proxy-c to serve the webhook', async () => (await fetch(`${withLogs.url}/api/webhooks/flaky`, { headers: admin })).ok || undefined, 30_000);
      const sent = await fetch(`${withLogs.url}/api/webhooks/flaky/test`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(sent.status, 202, await sent.text());
      const cr = await waitFor('Delivering=False', async () => {
        const o = await api(`${GROUP_PATH}/webhooks/flaky`);
        return condition(o, 'Delivering')?.status === 'False' ? o : undefined;
      }, 30_000);
      const delivering = condition(cr, 'Delivering')!;
      assert.equal(delivering.reason, 'DeliveriesExhausted');
      assert.match(delivering.message, /^proxy-c: deliveries were given up after their last retry within the last 10 minutes; last error: receiver answered 503/);
      // (status.reason here is Ready's PartiallyImplemented: proxy-a and proxy-b have no logs store.)
      const event = await waitFor('a Warning Event on the Webhook', async () => {
        const list = JSON.parse(await kubectl(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'])) as { items: { type: string; reason: string; regarding: { kind: string; name: string }; note: string }[] };
        return list.items.find((e) => e.regarding.kind === 'Webhook' && e.regarding.name === 'flaky' && e.reason === 'DeliveriesExhausted');
      });
      assert.equal(event.type, 'Warning');
      assert.match(event.note, /receiver answered 503/);
    } finally {
      await proxies['proxy-c']?.stop();
      delete proxies['proxy-c'];
      receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a Provider naming an InferencePool the proxies cannot use says so: InferencePool=False with a replica's reason, in REASON, with a Warning Event", { timeout: 60_000 }, async () => {
    // No InferencePool CRD on this API server and no Role for it: every proxy finds the pool unreadable.
    await apply({ apiVersion: 'gateway.skybridge.dev/v1alpha1', kind: 'Provider', metadata: { name: 'vllm', namespace: NS }, spec: { network_config: { inference_pool: { name: 'llama' } } } });
    try {
      const cr = await waitFor('REASON InferencePoolUnavailable', async () => {
        const o = await api(`${GROUP_PATH}/providers/vllm`);
        return o?.status?.reason === 'InferencePoolUnavailable' ? o : undefined;
      }, 30_000);
      const pool = condition(cr, 'InferencePool')!;
      assert.equal(pool.status, 'False');
      // The namespace defaulted to the Provider's own.
      assert.match(pool.message, /^proxy-[a-z]+: InferencePool skybridge\/llama cannot be read \(is the InferencePool CRD/);
      assert.equal(condition(cr, 'Ready')?.status, 'True', 'served: the proxies load it, they just find no server');
      const event = await waitFor('a Warning Event on the Provider', async () => {
        const list = JSON.parse(await kubectl(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'])) as { items: { type: string; reason: string; regarding: { kind: string; name: string }; note: string }[] };
        return list.items.find((e) => e.regarding.kind === 'Provider' && e.regarding.name === 'vllm' && e.reason === 'InferencePoolUnavailable');
      });
      assert.equal(event.type, 'Warning');
    } finally {
      await kubectl(['delete', 'provider', 'vllm', '-n', NS]);
    }
  });
});
