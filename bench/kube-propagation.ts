// How fast a change to one custom resource reaches every proxy replica, and what it costs, at a
// given number of resources (issue 27, "Scale"). A benchmark, not a test: it asserts nothing, it
// prints figures. On the real kube-apiserver the tests build (test/helpers/kube.ts), with the
// operator and two proxies started as the e2e tests start them (admin credentials: RBAC is not
// what is measured).
//
//   node bench/kube-propagation.ts --counts 10,700,2000 --changes 50 [--restart] [--failover] [--json out.json] [--root DIR] [--cpu-prof DIR] [--timeline]
//
// Per count: a realistic mix (2% Providers, 8% RoutingRules, 1% Customers, 3% Teams each in a
// Customer, the rest VirtualKeys spread over the Teams, each key's value and each Provider's key in
// a Secret; issue 28's kinds in the mix) is applied and rendered; then `--changes` single-resource
// edits, one at a time, rotating over the five kinds. Per edit: the time from sending the write
// to each proxy serving it (each proxy's /api polled in a tight loop: the edited object shows the
// new value), the operator's CPU seconds (/proc/<pid>/stat) from the write to 1 s after the last
// proxy served it (its status writes included), and each proxy's CPU for the
// reload (polling cost subtracted, measured the same way without a change). With `--restart`, the
// API server is restarted afterwards and one edit made as soon as it answers: the time from its
// return to every proxy serving the edit, and whether the leader stepped down. With `--failover`, a
// standby operator is started beside the leader once the first render has settled (so it watches
// through the edits, as a second replica does); afterwards the leader is SIGKILLed (a node lost, no
// lease handed back) and one edit written at once: the time from the kill to the standby holding
// the leader Lease, to every proxy serving the edit, and whether the standby rewrote every rendered
// ConfigMap and Secret or only what the edit changed (their resourceVersions before and after).
// The takeover waits out the lease (the operator's --lease-duration, 6 s by default). With `--cpu-prof DIR`
// the operator and one proxy run under node --cpu-prof, and the window of the edits within each
// profile is printed for `node bench/profile.ts --file <profile> --skip-ms A --until-ms B`. With
// `--timeline`, each edit's time is split: until the operator's index write reaches a watch of the
// bench's own (the operator's render and writes), until each proxy logs its reload (its watch and
// apply), and until the polling saw it served.
import { Buffer } from 'node:buffer';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { kubectlOk, startKubeApiServer, type KubeApiServer } from '../test/helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../test/helpers/crds.ts';
import { summarize, median, round } from './lib/stats.ts';
import { LABEL_SELECTOR } from '../operator/src/render/contract.ts';

const NODE = new URL('../node_modules/.bin/node', import.meta.url).pathname;
const NS = 'bench';
const GROUP = 'gateway.skybridge.dev/v1alpha1';
const POLL_MS = 2;

const { values } = parseArgs({
  options: {
    counts: { type: 'string', default: '10,700,2000' },
    changes: { type: 'string', default: '50' },
    restart: { type: 'boolean', default: false },
    failover: { type: 'boolean', default: false },
    json: { type: 'string' },
    // Another checkout's operator and proxy (e.g. `git archive <commit> operator proxy crds` with a
    // node_modules link): the before figures, measured the same way.
    root: { type: 'string' },
    'cpu-prof': { type: 'string' },
    timeline: { type: 'boolean', default: false },
  },
});
const ROOT = values.root ? `${values.root.replace(/\/$/, '')}/` : new URL('..', import.meta.url).pathname;
const OPERATOR = `${ROOT}operator/src/main.ts`;
const PROXY = `${ROOT}proxy/src/main.ts`;

interface Proc {
  child: ChildProcess;
  /** When it was spawned (performance.now()): a --cpu-prof profile's clock starts then. */
  spawnedAt: number;
  out: () => string;
  /** How many times the operator has logged that it stopped leading. */
  stepDowns: () => number;
}

function spawnLogged(args: string[], env: NodeJS.ProcessEnv, profileDir?: string): Proc {
  const spawnedAt = performance.now();
  if (profileDir) args = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...args];
  const child = spawn(NODE, args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stepDowns = 0;
  const keep = (d: Buffer) => {
    const text = d.toString();
    stepDowns += text.split('"stopped leading"').length - 1;
    out = (out + text).slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // Killed with the bench, unless it exits first (a listener per process would pile up over the counts).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  return { child, spawnedAt, out: () => out, stepDowns: () => stepDowns };
}

/** user + system CPU seconds of a process so far. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function stopProc(p: Proc | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number, everyMs = 200, context?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context?.() ?? ''}`);
    await sleep(everyMs);
  }
}

interface Mix {
  providers: number;
  rules: number;
  customers: number;
  teams: number;
  keys: number;
}

const mixFor = (n: number): Mix => {
  const providers = Math.max(1, Math.round(n * 0.02));
  const rules = Math.max(1, Math.round(n * 0.08));
  const customers = Math.max(1, Math.round(n * 0.01));
  const teams = Math.max(1, Math.round(n * 0.03));
  return { providers, rules, customers, teams, keys: Math.max(1, n - providers - rules - customers - teams) };
};

const provider = (i: number, retries = 1) => ({
  apiVersion: GROUP,
  kind: 'Provider',
  metadata: { name: `p-${i}`, namespace: NS },
  spec: {
    keys: [{ name: 'k', weight: 1, valueFrom: { secretKeyRef: { name: 'keys', key: `p-${i}` } } }],
    network_config: { base_url: 'https://api.example.com', max_retries: retries },
    custom_provider_config: { base_provider_type: 'openai' },
  },
});
const virtualKey = (i: number, m: Mix, description = 'v1') => ({
  apiVersion: GROUP,
  kind: 'VirtualKey',
  metadata: { name: `vk-${i}`, namespace: NS },
  spec: { description, team_id: `team-${i % m.teams}`, valueFrom: { secretKeyRef: { name: 'keys', key: `vk-${i}` } }, provider_configs: [{ provider: `p-${i % m.providers}`, allowed_models: ['*'], key_ids: ['*'] }] },
});
// Each with its own budget (rendered as a governance budget of its own), as issue 28's kinds are
// used. Display names are unique per kind (a duplicate is refused, and its keys with it).
const customer = (i: number, rev = 'v1') => ({
  apiVersion: GROUP,
  kind: 'Customer',
  metadata: { name: `customer-${i}`, namespace: NS },
  spec: { name: `Customer ${i} ${rev}`, budget: { max_limit: 1000, reset_duration: '1M' } },
});
const team = (i: number, m: Mix, rev = 'v1') => ({
  apiVersion: GROUP,
  kind: 'Team',
  metadata: { name: `team-${i}`, namespace: NS },
  spec: { name: `Team ${i} ${rev}`, customer_id: `customer-${i % m.customers}`, budget: { max_limit: 100, reset_duration: '1M' }, rateLimit: { request_max_limit: 600, request_reset_duration: '1m' } },
});
const rule = (i: number, m: Mix, description = 'v1') => ({
  apiVersion: GROUP,
  kind: 'RoutingRule',
  metadata: { name: `rule-${i}`, namespace: NS },
  spec: { description, cel_expression: `headers["x-route"] == "r${i}"`, targets: [{ provider: `p-${i % m.providers}`, model: 'gpt-4o', weight: 1 }] },
});

/** One edit: the object to apply and, per proxy, the /api path and the text that shows it is served. */
function change(n: number, m: Mix): { obj: Record<string, unknown>; path: string; marker: string; kind: string } {
  const kind = n % 5;
  const rev = `rev-${n}`;
  if (kind === 3) {
    const i = (n * 3) % m.teams;
    return { obj: team(i, m, rev), path: `/api/governance/teams/team-${i}`, marker: ` ${rev}"`, kind: 'Team' };
  }
  if (kind === 4) {
    const i = n % m.customers;
    return { obj: customer(i, rev), path: `/api/governance/customers/customer-${i}`, marker: ` ${rev}"`, kind: 'Customer' };
  }
  if (kind === 0) {
    const i = (n * 7) % m.keys;
    return { obj: virtualKey(i, m, rev), path: `/api/governance/virtual-keys/vk-${i}`, marker: `"${rev}"`, kind: 'VirtualKey' };
  }
  if (kind === 1) {
    const i = n % m.providers;
    // 2..9, never the value it had (1, or the last edit's).
    const retries = 2 + (n % 8);
    return { obj: provider(i, retries), path: `/api/providers/p-${i}`, marker: `"max_retries":${retries}`, kind: 'Provider' };
  }
  const i = (n * 5) % m.rules;
  return { obj: rule(i, m, rev), path: `/api/routing/rules/rule-${i}`, marker: `"${rev}"`, kind: 'RoutingRule' };
}

interface CountResult {
  count: number;
  mix: Mix;
  machineLoad: number[];
  firstRenderMs: number;
  propagationMs: { p50: number; p99: number; max: number; n: number };
  /** Edits no proxy served within the bound (left out of the figures above). */
  timeouts: number;
  byKind: Record<string, { p50: number; p99: number }>;
  operatorCpuPerChange: { median: number; p90: number };
  proxyCpuPerChange: { median: number; p90: number };
  restart?: { apiDownMs: number; servedAfterReturnMs: number; leaderSteppedDown: boolean };
  /**
   * With --failover: from the leader's SIGKILL to the standby holding the Lease, and to both proxies
   * serving an edit written right after the kill; whether the standby rewrote every rendered object
   * (`rewritten` of `rendered` ConfigMaps and Secrets), and its CPU seconds from the kill to 1 s after served.
   */
  failover?: { killToLeaseMs: number; killToServedMs: number; standbyRerenderedAll: boolean; rewritten: number; rendered: number; standbyCpuS: number };
  /** With --timeline: per edit, ms from the write to the index written, to each proxy's reload, to served by both. */
  timeline?: { kind: string; indexMs: number | undefined; reloadedMs: (number | undefined)[]; servedMs: number }[];
  /** With --cpu-prof: the edits' window in each profiled process's clock (ms since its spawn). */
  profileWindows?: Record<string, { dir: string; skipMs: number; untilMs: number }>;
}

async function measure(count: number, changes: number, withRestart: boolean, withFailover: boolean): Promise<CountResult> {
  const m = mixFor(count);
  const kube: KubeApiServer = await startKubeApiServer();
  const agent = new Agent({ connect: { ca: kube.ca } });
  let operator: Proc | undefined;
  let standby: Proc | undefined;
  let crds: InstalledCrds | undefined;
  const proxies: { name: string; proc: Proc; url: string }[] = [];
  const context = () => [`--- operator ---\n${operator?.out().slice(-3000)}`, ...(standby ? [`--- standby ---\n${standby.out().slice(-3000)}`] : []), ...proxies.map((p) => `--- ${p.name} ---\n${p.proc.out().slice(-2000)}`)].join('\n');
  try {
    const kubectl = (args: string[], stdin?: string) => kubectlOk(kube, args, stdin);
    crds = await installCrds(kube);
    await kubectl(['create', 'namespace', NS]);
    const data: Record<string, string> = {};
    for (let i = 0; i < m.providers; i++) data[`p-${i}`] = `sk-provider-${i}-${'x'.repeat(40)}`;
    for (let i = 0; i < m.keys; i++) data[`vk-${i}`] = `sk-bf-bench-${String(i).padStart(8, '0')}`;
    await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keys', namespace: NS }, stringData: data }));
    const items = [
      ...Array.from({ length: m.customers }, (_, i) => customer(i)),
      ...Array.from({ length: m.teams }, (_, i) => team(i, m)),
      ...Array.from({ length: m.providers }, (_, i) => provider(i)),
      ...Array.from({ length: m.keys }, (_, i) => virtualKey(i, m)),
      ...Array.from({ length: m.rules }, (_, i) => rule(i, m)),
    ];
    for (let i = 0; i < items.length; i += 500) {
      await kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items.slice(i, i + 500) }));
    }

    const env = { KUBECONFIG: kube.kubeconfig, HOME: kube.stateDir };
    const started = Date.now();
    const profileDir = (name: string) => (values['cpu-prof'] ? `${values['cpu-prof'].replace(/\/$/, '')}/${count}-${name}` : undefined);
    const operatorArgs = (identity: string) => [OPERATOR, '--namespace', NS, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--identity', identity, '--log-level', 'info'];
    operator = spawnLogged(operatorArgs('bench-op'), env, profileDir('operator'));
    for (const name of ['proxy-a', 'proxy-b']) {
      const proc = spawnLogged([PROXY, '--kube-namespace', NS, '--port', '0', '--host', '127.0.0.1', '--log-level', 'info', '--app-dir', kube.stateDir], { ...env, POD_NAME: name }, name === 'proxy-a' ? profileDir(name) : undefined);
      const port = await until(`${name} to listen`, async () => /"address":"http:\/\/[^:]+:(\d+)"/.exec(proc.out())?.[1], 120_000, 100, proc.out);
      proxies.push({ name, proc, url: `http://127.0.0.1:${port}` });
    }
    const served = async (url: string, path: string, marker: string) => {
      const res = await request(`${url}${path}`);
      const text = await res.body.text();
      return res.statusCode === 200 && text.includes(marker);
    };
    // Everything rendered and loaded: the last VirtualKey of the mix is served by both.
    const last = virtualKey(m.keys - 1, m);
    await until('the first render to be served', async () => (await Promise.all(proxies.map((p) => served(p.url, `/api/governance/virtual-keys/${last.metadata.name}`, '"v1"')))).every(Boolean), 20 * 60_000, 500, context);
    const firstRenderMs = Date.now() - started;
    const opPid = operator.child.pid;
    // Statuses of the first render settle before anything is timed: every resource Ready for its
    // generation (on a loaded machine 2,000 status writes take well over any fixed wait, and an
    // operator starved of CPU looks idle while it still has them to write).
    interface Listed { items: { metadata: { generation?: number }; status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] } }[] }
    const ready = async (plural: string) => {
      const res = await undiciFetch(`${kube.url}/apis/${GROUP}/namespaces/${NS}/${plural}`, { headers: { authorization: `Bearer ${kube.token}` }, dispatcher: agent });
      const list = (await res.json()) as Listed;
      return list.items.every((o) => o.status?.observedGeneration === o.metadata.generation && o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    };
    await until('every status of the first render', async () => (await ready('providers')) && (await ready('virtualkeys')) && (await ready('routingrules')) && (await ready('teams')) && (await ready('customers')), 10 * 60_000, 1000, context);
    if (withFailover) {
      // Beside the leader before the edits, its caches synced: a standby as a second replica runs.
      const s = (standby = spawnLogged(operatorArgs('bench-op-standby'), env));
      await until('the standby operator to sync its caches', async () => s.out().includes('"caches synced"'), 10 * 60_000, 200, context);
    }
    await sleep(2000);
    const proxyPids = proxies.map((p) => p.proc.child.pid);
    // What the polling itself costs each proxy (subtracted from its CPU per edit), measured on a
    // settled configuration. The operator's figure is raw: at rest it only renews its lease.
    const idleWindowMs = 3000;
    const px0 = proxyPids.map(cpuSeconds);
    const pollUntil = Date.now() + idleWindowMs;
    await Promise.all(proxies.map(async (p) => {
      while (Date.now() < pollUntil) {
        await served(p.url, '/api/providers/p-0', 'never-there');
        await sleep(POLL_MS);
      }
    }));
    const pxIdlePerMs = proxyPids.map((pid, i) => (cpuSeconds(pid) - px0[i]) / idleWindowMs);

    const latencies: number[] = [];
    let timeouts = 0;
    const byKind: Record<string, number[]> = {};
    const opCpu: number[] = [];
    const pxCpu: number[] = [];
    const applyUrl = (obj: { kind: string; metadata: { name: string } }) => {
      const plural = `${obj.kind.toLowerCase()}s`;
      return `${kube.url}/apis/${GROUP}/namespaces/${NS}/${plural}/${obj.metadata.name}?fieldManager=bench&force=true`;
    };
    const write = async (obj: Record<string, unknown>) => {
      const res = await undiciFetch(applyUrl(obj as { kind: string; metadata: { name: string } }), {
        method: 'PATCH',
        headers: { authorization: `Bearer ${kube.token}`, 'content-type': 'application/apply-patch+yaml' },
        body: JSON.stringify(obj),
        dispatcher: agent,
      });
      if (!res.ok) throw new Error(`apply ${res.status}: ${(await res.text()).slice(0, 500)}`);
      await res.arrayBuffer();
    };
    const timeEdit = async (n: number, timeoutMs = 60_000) => {
      const c = change(n, m);
      const t0 = performance.now();
      await write(c.obj);
      const each = await Promise.all(proxies.map(async (p) => {
        const deadline = Date.now() + timeoutMs;
        while (!(await served(p.url, c.path, c.marker).catch(() => false))) {
          if (Date.now() > deadline) throw new Error(`edit ${n} (${c.kind} ${c.path}) not served by ${p.name} within ${timeoutMs} ms\n${context()}`);
          await sleep(POLL_MS);
        }
        return performance.now() - t0;
      }));
      return { c, t0, ms: Math.max(...each) };
    };

    // --timeline: when the index ConfigMap's writes reach a watch (Date.now() at each event).
    const indexEvents: number[] = [];
    const timelineWatch = new AbortController();
    if (values.timeline) {
      const res = await undiciFetch(`${kube.url}/api/v1/namespaces/${NS}/configmaps?watch=1&fieldSelector=metadata.name%3Dskybridge-config-index`, { headers: { authorization: `Bearer ${kube.token}` }, dispatcher: agent, signal: timelineWatch.signal });
      void (async () => {
        try {
          for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
            const at = Date.now();
            for (const line of Buffer.from(chunk).toString().split('\n')) if (line.includes('"MODIFIED"')) indexEvents.push(at);
          }
        } catch {
          // aborted at the end
        }
      })();
    }
    /** Each proxy's reload log lines' times (ms since the epoch) after `from`. */
    const reloadsAfter = (p: Proc, from: number): number | undefined => {
      let first: number | undefined;
      for (const line of p.out().split('\n')) {
        if (!line.includes('configuration reloaded from Kubernetes')) continue;
        const t = Date.parse(/"time":"([^"]+)"/.exec(line)?.[1] ?? line.split(' ')[0]);
        if (t >= from && (first === undefined || t < first)) first = t;
      }
      return first;
    };
    const timeline: NonNullable<CountResult['timeline']> = [];
    const editsFrom = performance.now();
    for (let n = 1; n <= changes; n++) {
      const op = cpuSeconds(opPid);
      const px = proxyPids.map(cpuSeconds);
      const wroteAt = Date.now();
      let edit: Awaited<ReturnType<typeof timeEdit>>;
      try {
        edit = await timeEdit(n);
      } catch (err) {
        // Not served in time (a loaded machine): counted at the bound, and said so.
        process.stderr.write(`  ${count}: ${(err as Error).message.split('\n')[0]}\n`);
        timeouts++;
        continue;
      }
      const { c, ms } = edit;
      latencies.push(ms);
      (byKind[c.kind] ??= []).push(ms);
      // Status writes and events follow the render: counted in the edit's cost.
      await sleep(1000);
      // After the wait: a proxy logs its reload after it serves the new snapshot.
      if (values.timeline) {
        const index = indexEvents.find((t) => t >= wroteAt);
        const entry = { kind: c.kind, indexMs: index === undefined ? undefined : index - wroteAt, reloadedMs: proxies.map((p) => { const t = reloadsAfter(p.proc, wroteAt); return t === undefined ? undefined : t - wroteAt; }), servedMs: round(ms, 1) };
        timeline.push(entry);
        process.stderr.write(`  ${count}: edit ${n} index written +${entry.indexMs} ms, reloaded +${entry.reloadedMs.join(' / +')} ms\n`);
      }
      opCpu.push(cpuSeconds(opPid) - op);
      // The proxies were polled only until they served; the rest of the window they idled (~0).
      pxCpu.push(median(proxyPids.map((pid, i) => Math.max(0, cpuSeconds(pid) - px[i] - pxIdlePerMs[i] * ms))));
      process.stderr.write(`  ${count}: edit ${n} ${c.kind} served by both in ${ms.toFixed(1)} ms\n`);
    }

    const editsTo = performance.now();
    timelineWatch.abort();
    const profiled = values['cpu-prof'] ? [['operator', operator], ['proxy-a', proxies[0].proc]] as const : [];
    const profileWindows = Object.fromEntries(profiled.map(([name, p]) => [name, { dir: profileDir(name) as string, skipMs: Math.round(editsFrom - p.spawnedAt), untilMs: Math.round(editsTo - p.spawnedAt) }]));
    const result: CountResult = {
      count,
      ...(profiled.length ? { profileWindows } : {}),
      mix: m,
      machineLoad: (readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3)).map(Number),
      firstRenderMs,
      propagationMs: (({ p50, p99, max, n }) => ({ p50: round(p50, 1), p99: round(p99, 1), max: round(max, 1), n }))(summarize(latencies)),
      timeouts,
      byKind: Object.fromEntries(Object.entries(byKind).map(([k, v]) => { const s = summarize(v); return [k, { p50: round(s.p50, 1), p99: round(s.p99, 1) }]; })),
      operatorCpuPerChange: { median: round(median(opCpu), 3), p90: round(summarize(opCpu).p90, 3) },
      proxyCpuPerChange: { median: round(median(pxCpu), 3), p90: round(summarize(pxCpu).p90, 3) },
      ...(values.timeline ? { timeline } : {}),
    };

    if (withRestart) {
      const before = operator.stepDowns();
      const down = performance.now();
      await kube.restart();
      const back = performance.now();
      const n = changes + 1;
      // The first write may still meet an API server finishing its start: retried until it lands.
      const c = change(n, m);
      await until('the API server to take a write', async () => (await write(c.obj), true), 60_000, 100);
      await Promise.all(proxies.map((p) => until(`${p.name} to serve the edit made after the restart`, () => served(p.url, c.path, c.marker), 120_000, POLL_MS, context)));
      const servedAfterReturnMs = performance.now() - back;
      result.restart = { apiDownMs: round(back - down, 0), servedAfterReturnMs: round(servedAfterReturnMs, 0), leaderSteppedDown: operator.stepDowns() > before };
    }

    if (withFailover && standby) {
      const get = async (path: string) => {
        const res = await undiciFetch(`${kube.url}${path}`, { headers: { authorization: `Bearer ${kube.token}` }, dispatcher: agent });
        if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
        return res.json();
      };
      const holder = async () => ((await get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/skybridge-operator`)) as { spec?: { holderIdentity?: string } }).spec?.holderIdentity;
      // Whoever leads now (the first operator, unless a restart moved the lease) is the one lost.
      const leaderId = await until('a leader on the Lease', holder, 60_000, 200, context);
      const [leader, next, nextId] = leaderId === 'bench-op-standby' ? [standby, operator, 'bench-op'] : [operator, standby, 'bench-op-standby'];
      // Every rendered ConfigMap and Secret with its resourceVersion, to see what the new leader rewrites.
      const renderedVersions = async () => {
        const selector = `labelSelector=${encodeURIComponent(LABEL_SELECTOR)}`;
        const lists = (await Promise.all([get(`/api/v1/namespaces/${NS}/configmaps?${selector}`), get(`/api/v1/namespaces/${NS}/secrets?${selector}`)])) as { items: { kind?: string; metadata: { name: string; resourceVersion: string } }[] }[];
        return new Map(lists.flatMap((l, i) => l.items.map((o) => [`${i ? 'Secret' : 'ConfigMap'}/${o.metadata.name}`, o.metadata.resourceVersion] as const)));
      };
      const before = await renderedVersions();
      const nextPid = next.child.pid;
      const cpu0 = cpuSeconds(nextPid);
      const exited = new Promise((r) => leader.child.once('exit', r));
      const killedAt = performance.now();
      leader.child.kill('SIGKILL');
      await exited;
      const c = change(changes + (withRestart ? 2 : 1), m);
      await write(c.obj);
      const leaseTaken = until('the standby to hold the Lease', async () => (await holder()) === nextId && performance.now() - killedAt, 120_000, 20, context);
      await Promise.all(proxies.map((p) => until(`${p.name} to serve the edit made after the kill`, () => served(p.url, c.path, c.marker), 120_000, POLL_MS, context)));
      const killToServedMs = performance.now() - killedAt;
      const killToLeaseMs = await leaseTaken;
      await sleep(1000);
      const standbyCpuS = cpuSeconds(nextPid) - cpu0;
      const after = await renderedVersions();
      const rewritten = [...after].filter(([key, v]) => before.get(key) !== v).length;
      result.failover = { killToLeaseMs: round(killToLeaseMs, 0), killToServedMs: round(killToServedMs, 0), standbyRerenderedAll: rewritten >= after.size, rewritten, rendered: after.size, standbyCpuS: round(standbyCpuS, 2) };
      const f = result.failover;
      process.stderr.write(`  ${count}: failover: leader SIGKILLed; the standby held the lease +${f.killToLeaseMs} ms, both proxies served an edit +${f.killToServedMs} ms; it rewrote ${f.rewritten} of ${f.rendered} rendered objects (${f.standbyRerenderedAll ? 'everything' : 'served on'}), ${f.standbyCpuS} CPU-s\n`);
    }
    return result;
  } finally {
    await stopProc(operator);
    await stopProc(standby);
    for (const p of proxies) await stopProc(p.proc);
    await agent.close();
    await kube.stop();
    await crds?.close();
  }
}

// Interrupted: the exit handlers stop the API server and the processes it started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

const results: CountResult[] = [];
for (const count of (values.counts as string).split(',').map(Number)) {
  process.stderr.write(`# ${count} resources\n`);
  const r = await measure(count, Number(values.changes), values.restart === true, values.failover === true);
  results.push(r);
  process.stdout.write(`${JSON.stringify(r)}\n`);
}
if (values.json) writeFileSync(values.json, JSON.stringify(results, null, 2));
