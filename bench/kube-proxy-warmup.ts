// A proxy's first reloads after start, with and without the start-up rehearsal of reloads
// (proxy/src/config/kube-rehearse.ts), in fresh processes (the runtime's warmth is per process),
// alternating. The operator's renderings (the start-up one, then single-resource edits as
// bench/kube-propagation.ts makes them) are made once, here; each child starts as a proxy does
// (assemble, check and compile without the reload memos), rehearses or not, then times the CPU of
// each edit's reload (assemble, check, compile, swap) on its own thread.
//
//   node bench/kube-proxy-warmup.ts [--count 2000] [--edits 3] [--pairs 4] [--rehearsed-edits 4] [--start empty]
//
// --rehearsed-edits 0: the rendering as served alone (the memos filled, no edited copies).
// --start empty: the proxy starts before the first rendering (as in bench/kube-propagation.ts) and
// loads it as a reload (through the memos); the rehearsal follows that first reload.
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './lib/stats.ts';

const { values } = parseArgs({ options: { count: { type: 'string', default: '2000' }, edits: { type: 'string', default: '3' }, pairs: { type: 'string', default: '4' }, 'rehearsed-edits': { type: 'string', default: '4' }, start: { type: 'string', default: 'rendered' }, child: { type: 'string' }, data: { type: 'string' } } });

interface Rendering {
  configMaps: Record<string, Record<string, string>>;
  secrets: Record<string, Record<string, string>>;
}

const cpuMs = (): number => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};

if (values.child) await child(values.child === 'with', values.data as string);
else await parent();

async function parent(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kube-warmup-'));
  try {
    const file = join(dir, 'renderings.json');
    writeFileSync(file, JSON.stringify(await renderings(Number(values.count), Number(values.edits))));
    const runs: Record<'with' | 'without', { edits: number[]; rehearsal: number }[]> = { with: [], without: [] };
    const loads: number[] = [];
    for (let p = 0; p < Number(values.pairs); p++) {
      // Alternating which goes first, so a drift in the machine's load hits both alike.
      for (const mode of p % 2 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
        loads.push(loadavg()[0]);
        const out = execFileSync(process.execPath, [import.meta.filename, '--child', mode, '--data', file, '--rehearsed-edits', values['rehearsed-edits'] as string, '--start', values.start as string], { encoding: 'utf8' });
        runs[mode].push(JSON.parse(out.trim().split('\n').pop() as string) as { edits: number[]; rehearsal: number });
      }
    }
    const row = (mode: 'with' | 'without') => {
      const r = runs[mode];
      const edits = r[0].edits.map((_, i) => `${median(r.map((x) => x.edits[i])).toFixed(1)} (${r.map((x) => x.edits[i].toFixed(0)).join('/')})`);
      return `${mode.padEnd(8)} ${edits.join('  ')}   rehearsal ${median(r.map((x) => x.rehearsal)).toFixed(1)} ms`;
    };
    process.stdout.write(`${values.count} resources, start ${values.start}, ${values['rehearsed-edits']} edits rehearsed, ${values.pairs} alternating pairs, load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}\n`);
    process.stdout.write(`thread CPU ms of reloads 1..${values.edits} after start, median (each run)\n${row('without')}\n${row('with')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The start-up rendering and one per edit, as the operator writes them (its memos kept between). */
async function renderings(n: number, edits: number): Promise<Rendering[]> {
  const { renderOutput } = await import('../operator/src/render/output.ts');
  const { RenderMemo } = await import('../operator/src/render/memo.ts');
  const { desiredState } = await import('../operator/src/resources/desired.ts');
  const { TranslationCache } = await import('../operator/src/resources/translation-cache.ts');
  const { CheckMemo } = await import('../proxy/src/contract.ts');
  type CR = import('../operator/src/resources/kinds.ts').CustomResource;
  type Kind = import('../operator/src/resources/kinds.ts').KindName;
  const NS = 'bench';
  const providers = Math.max(1, Math.round(n * 0.02));
  const rules = Math.max(1, Math.round(n * 0.08));
  const customers = Math.max(1, Math.round(n * 0.01));
  const teams = Math.max(1, Math.round(n * 0.03));
  const keys = Math.max(1, n - providers - rules - customers - teams);
  const cr = (kind: Kind, name: string, spec: unknown, generation = 1): CR => ({ apiVersion: 'gateway.skybridge.dev/v1alpha1', kind, metadata: { name, namespace: NS, uid: `uid-${kind}-${name}`, generation, creationTimestamp: '2025-01-01T00:00:00Z' }, spec });
  const ref = (key: string) => ({ secretKeyRef: { name: 'keys', key } });
  const provider = (i: number, retries = 1, g = 1) => cr('Provider', `p-${i}`, { keys: [{ name: 'k', weight: 1, valueFrom: ref(`p-${i}`) }], network_config: { base_url: 'https://api.example.com', max_retries: retries }, custom_provider_config: { base_provider_type: 'openai' } }, g);
  const virtualKey = (i: number, description = 'v1', g = 1) => cr('VirtualKey', `vk-${i}`, { description, team_id: `team-${i % teams}`, valueFrom: ref(`vk-${i}`), provider_configs: [{ provider: `p-${i % providers}`, allowed_models: ['*'], key_ids: ['*'] }] }, g);
  const customer = (i: number, rev = 'v1', g = 1) => cr('Customer', `customer-${i}`, { name: `Customer ${i} ${rev}`, budget: { max_limit: 1000, reset_duration: '1M' } }, g);
  const team = (i: number, rev = 'v1', g = 1) => cr('Team', `team-${i}`, { name: `Team ${i} ${rev}`, customer_id: `customer-${i % customers}`, budget: { max_limit: 100, reset_duration: '1M' } }, g);
  const rule = (i: number, description = 'v1', g = 1) => cr('RoutingRule', `rule-${i}`, { description, cel_expression: `headers["x-route"] == "r${i}"`, targets: [{ provider: `p-${i % providers}`, model: 'gpt-4o', weight: 1 }] }, g);
  const data: Record<string, string> = {};
  for (let i = 0; i < providers; i++) data[`p-${i}`] = Buffer.from(`sk-provider-${i}-${'x'.repeat(40)}`).toString('base64');
  for (let i = 0; i < keys; i++) data[`vk-${i}`] = Buffer.from(`sk-bf-bench-${String(i).padStart(8, '0')}`).toString('base64');
  const secrets = { get: (ns: string, name: string) => (ns === NS && name === 'keys' ? data : undefined), version: (ns: string, name: string) => (ns === NS && name === 'keys' ? '1' : undefined) };
  const resources = new Map<string, CR>();
  const put = (r: CR) => resources.set(`${r.kind}/${r.metadata.name}`, r);
  for (let i = 0; i < customers; i++) put(customer(i));
  for (let i = 0; i < teams; i++) put(team(i));
  for (let i = 0; i < providers; i++) put(provider(i));
  for (let i = 0; i < keys; i++) put(virtualKey(i));
  for (let i = 0; i < rules; i++) put(rule(i));
  // bench/kube-propagation.ts's change(n) from n = 1: the first edits are a Provider, a RoutingRule, a Team.
  const change = (k: number): CR => {
    const g = k + 1;
    const rev = `rev-${k}`;
    return [virtualKey((k * 7) % keys, rev, g), provider(k % providers, 2 + (k % 8), g), rule((k * 5) % rules, rev, g), team((k * 3) % teams, rev, g), customer(k % customers, rev, g)][k % 5];
  };
  const translations = new TranslationCache();
  const check = new CheckMemo();
  const texts = new WeakMap<object, string>();
  const memo = new RenderMemo();
  const out: Rendering[] = [];
  for (let k = 0; k <= edits; k++) {
    if (k > 0) put(change(k));
    const desired = desiredState([...resources.values()], secrets, undefined, (c) => translations.translate(c, secrets), check);
    const r = renderOutput(desired.input, { namespace: NS, textCache: texts, memo });
    out.push({ configMaps: Object.fromEntries([...r.parts, ...r.sourceParts, r.index].map((o) => [o.metadata.name, o.data])), secrets: Object.fromEntries(r.secrets.map((s) => [s.metadata.name, s.data])) });
  }
  return out;
}

async function child(rehearse: boolean, file: string): Promise<void> {
  const { assemble, AssemblyMemo } = await import('../proxy/src/config/kube-document.ts');
  const { rehearsalEdits } = await import('../proxy/src/config/kube-rehearse.ts');
  const { checkConfig } = await import('../proxy/src/config/check.ts');
  const { compileSnapshot } = await import('../proxy/src/config/snapshot.ts');
  const { withGatewaySettings } = await import('../proxy/src/config/env-settings.ts');
  const { SnapshotHolder } = await import('../proxy/src/config/holder.ts');
  const { MemoryConfigStore } = await import('../proxy/src/config/store.ts');
  const { ConfigService } = await import('../proxy/src/config/service.ts');
  const { configureLog } = await import('../proxy/src/log.ts');
  configureLog({ level: 'error' });
  const all = JSON.parse(readFileSync(file, 'utf8')) as Rendering[];
  // What the informers hold: an object is replaced only when it changed.
  const configMaps = new Map<string, Record<string, string>>();
  const secretObjects = new Map<string, Record<string, string>>();
  const take = (r: Rendering) => {
    for (const [name, d] of Object.entries(r.configMaps)) if (JSON.stringify(configMaps.get(name)) !== JSON.stringify(d)) configMaps.set(name, d);
    for (const [name, d] of Object.entries(r.secrets)) if (JSON.stringify(secretObjects.get(name)) !== JSON.stringify(d)) secretObjects.set(name, d);
  };
  const configMap = (n: string) => configMaps.get(n);
  const secret = (n: string) => secretObjects.get(n);
  const memo = new AssemblyMemo();
  // Start-up as openKubernetesConfig and openState do it.
  take(all[0]);
  const first = assemble(configMap, secret, memo);
  if (first.state !== 'complete') throw new Error(`start-up rendering not complete: ${first.state}`);
  const doc = withGatewaySettings(first);
  const empty = values.start === 'empty';
  const loaded = empty ? checkConfig({}, 'an empty configuration') : checkConfig(doc.document, 'start-up', doc.env);
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(loaded.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: loaded.raw });
  if (empty) await service.replace(doc.document, { source: 'first', env: doc.env, origin: { managedBy: 'kubernetes', editWith: 'kubectl', sources: first.index.sources } });
  let rehearsal = 0;
  if (rehearse) {
    // The steps KubeConfigSource rehearses, each in a turn of its own.
    const t0 = cpuMs();
    for (const step of [configMap, ...rehearsalEdits(configMap, Number(values['rehearsed-edits'])), configMap]) {
      await new Promise((r) => setImmediate(r));
      const state = assemble(step, secret, memo);
      if (state.state !== 'complete') throw new Error(`rehearsal not complete: ${state.state}`);
      const d = withGatewaySettings(state);
      await service.rehearse(d.document, d.env);
    }
    rehearsal = cpuMs() - t0;
  }
  const edits: number[] = [];
  for (const r of all.slice(1)) {
    take(r);
    await new Promise((resolve) => setImmediate(resolve));
    const t0 = cpuMs();
    const state = assemble(configMap, secret, memo);
    if (state.state !== 'complete') throw new Error(`edit not complete: ${state.state}`);
    const d = withGatewaySettings(state);
    await service.replace(d.document, { source: 'edit', env: d.env, origin: { managedBy: 'kubernetes', editWith: 'kubectl', sources: d.index.sources } });
    edits.push(cpuMs() - t0);
  }
  process.stdout.write(`${JSON.stringify({ edits, rehearsal })}\n`);
}
