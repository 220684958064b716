// Where one edit's time goes at N resources, in one process and without an API server: the
// operator's desired state and render (with the memos the controller keeps), then a proxy's
// assemble and reload (with the memos its follower keeps), for single-resource edits rotating over
// the five kinds, as bench/kube-propagation.ts makes them. Prints the median and largest CPU ms of each step
// (this thread's, so a busy machine inflates them less than wall time).
//
//   node bench/kube-reload-micro.ts [--count 2000] [--changes 40]
import { Buffer } from 'node:buffer';
import { parseArgs } from 'node:util';
import { CheckMemo } from '../proxy/src/contract.ts';
import { assemble, AssemblyMemo } from '../proxy/src/config/kube-document.ts';
import { checkConfig } from '../proxy/src/config/check.ts';
import { CompileMemo, compileSnapshot } from '../proxy/src/config/snapshot.ts';
import { withGatewaySettings } from '../proxy/src/config/env-settings.ts';
import { renderOutput } from '../operator/src/render/output.ts';
import { RenderMemo } from '../operator/src/render/memo.ts';
import { desiredState } from '../operator/src/resources/desired.ts';
import { TranslationCache, type VersionedSecretLookup } from '../operator/src/resources/translation-cache.ts';
import type { CustomResource, KindName } from '../operator/src/resources/kinds.ts';
import { median } from './lib/stats.ts';
import { rehearseEdits } from '../operator/src/rehearse.ts';

const { values } = parseArgs({ options: { count: { type: 'string', default: '2000' }, changes: { type: 'string', default: '40' } } });
const N = Number(values.count);
const NS = 'bench';
const providers = Math.max(1, Math.round(N * 0.02));
const rules = Math.max(1, Math.round(N * 0.08));
const customers = Math.max(1, Math.round(N * 0.01));
const teams = Math.max(1, Math.round(N * 0.03));
const keys = Math.max(1, N - providers - rules - customers - teams);

// An edit keeps the resource's creationTimestamp, as the API server does.
const created = new Map<string, string>();
const cr = (kind: KindName, name: string, spec: unknown, generation = 1): CustomResource => {
  let creationTimestamp = created.get(`${kind}/${name}`);
  if (creationTimestamp === undefined) created.set(`${kind}/${name}`, (creationTimestamp = `2025-01-01T00:00:${String(created.size % 60).padStart(2, '0')}Z`));
  return { apiVersion: 'gateway.skybridge.dev/v1alpha1', kind, metadata: { name, namespace: NS, uid: `uid-${kind}-${name}`, generation, creationTimestamp }, spec };
};
const ref = (key: string) => ({ secretKeyRef: { name: 'keys', key } });
const provider = (i: number, retries = 1, g = 1) => cr('Provider', `p-${i}`, { keys: [{ name: 'k', weight: 1, valueFrom: ref(`p-${i}`) }], network_config: { base_url: 'https://api.example.com', max_retries: retries }, custom_provider_config: { base_provider_type: 'openai' } }, g);
const virtualKey = (i: number, description = 'v1', g = 1) => cr('VirtualKey', `vk-${i}`, { description, team_id: `team-${i % teams}`, valueFrom: ref(`vk-${i}`), provider_configs: [{ provider: `p-${i % providers}`, allowed_models: ['*'], key_ids: ['*'] }] }, g);
const customer = (i: number, rev = 'v1', g = 1) => cr('Customer', `customer-${i}`, { name: `Customer ${i} ${rev}`, budget: { max_limit: 1000, reset_duration: '1M' } }, g);
const team = (i: number, rev = 'v1', g = 1) => cr('Team', `team-${i}`, { name: `Team ${i} ${rev}`, customer_id: `customer-${i % customers}`, budget: { max_limit: 100, reset_duration: '1M' }, rateLimit: { request_max_limit: 600, request_reset_duration: '1m' } }, g);
const rule = (i: number, description = 'v1', g = 1) => cr('RoutingRule', `rule-${i}`, { description, cel_expression: `headers["x-route"] == "r${i}"`, targets: [{ provider: `p-${i % providers}`, model: 'gpt-4o', weight: 1 }] }, g);

const data: Record<string, string> = {};
for (let i = 0; i < providers; i++) data[`p-${i}`] = Buffer.from(`sk-provider-${i}-${'x'.repeat(40)}`).toString('base64');
for (let i = 0; i < keys; i++) data[`vk-${i}`] = Buffer.from(`sk-bf-bench-${String(i).padStart(8, '0')}`).toString('base64');
const secrets: VersionedSecretLookup = { get: (ns, name) => (ns === NS && name === 'keys' ? data : undefined), version: (ns, name) => (ns === NS && name === 'keys' ? '1' : undefined) };

const resources = new Map<string, CustomResource>();
const put = (r: CustomResource) => resources.set(`${r.kind}/${r.metadata.name}`, r);
for (let i = 0; i < customers; i++) put(customer(i));
for (let i = 0; i < teams; i++) put(team(i));
for (let i = 0; i < providers; i++) put(provider(i));
for (let i = 0; i < keys; i++) put(virtualKey(i));
for (let i = 0; i < rules; i++) put(rule(i));

/** bench/kube-propagation.ts's change(n), as a resource. */
function change(n: number): CustomResource {
  const kind = n % 5;
  const rev = `rev-${n}`;
  const g = n + 1;
  if (kind === 3) return team((n * 3) % teams, rev, g);
  if (kind === 4) return customer(n % customers, rev, g);
  if (kind === 0) return virtualKey((n * 7) % keys, rev, g);
  if (kind === 1) return provider(n % providers, 2 + (n % 8), g);
  return rule((n * 5) % rules, rev, g);
}

// The operator's memos (controller.ts) and one proxy's (kube-source.ts, service.ts).
const translations = new TranslationCache();
const operatorCheck = new CheckMemo();
const texts = new WeakMap<object, string>();
const renderMemo = new RenderMemo();
const assembly = new AssemblyMemo();
const proxyCheck = new CheckMemo();
const compileMemo = new CompileMemo();
const configMaps = new Map<string, Record<string, string>>();
const secretObjects = new Map<string, Record<string, string>>();

const steps: Record<string, number[]> = {};
// CPU time of this thread, not wall time: the machine may be shared.
const cpuMs = (): number => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};
const time = <T>(name: string, fn: () => T): T => {
  const t0 = cpuMs();
  const out = fn();
  (steps[name] ??= []).push(cpuMs() - t0);
  return out;
};

function once(record: boolean): void {
  const list = [...resources.values()];
  const t = (name: string) => (record ? name : `warm ${name}`);
  const desired = time(t('operator desiredState'), () => desiredState(list, secrets, undefined, (c) => translations.translate(c, secrets), operatorCheck));
  const out = time(t('operator render'), () => renderOutput(desired.input, { namespace: NS, textCache: texts, memo: renderMemo }));
  // What the informers hold after the writes: only changed objects are new objects.
  for (const o of [...out.parts, ...out.sourceParts, out.index]) if (configMaps.get(o.metadata.name)?.[Object.keys(o.data)[0]] !== Object.values(o.data)[0]) configMaps.set(o.metadata.name, o.data);
  for (const s of out.secrets) if (JSON.stringify(secretObjects.get(s.metadata.name)) !== JSON.stringify(s.data)) secretObjects.set(s.metadata.name, s.data);
  const state = time(t('proxy assemble'), () => assemble((n) => configMaps.get(n), (n) => secretObjects.get(n), assembly));
  if (state.state !== 'complete') throw new Error(`not complete: ${JSON.stringify(state).slice(0, 300)}`);
  const doc = withGatewaySettings(state);
  const checked = time(t('proxy check'), () => checkConfig(doc.document, 'bench', doc.env, undefined, proxyCheck));
  time(t('proxy compile'), () => compileSnapshot(checked.config, compileMemo));
}

once(false);
// As the controller does after its first render (rehearse.ts).
const rehearsalFrom = cpuMs();
rehearseEdits([...resources.values()], secrets, (c) => translations.translate(c, secrets), operatorCheck, (d) => void renderOutput(d.input, { namespace: NS, textCache: texts, memo: renderMemo }));
const rehearsalMs = cpuMs() - rehearsalFrom;
const editsFrom = performance.now();
const changes = Number(values.changes);
for (let n = 1; n <= changes; n++) {
  put(change(n));
  once(true);
}
const rows = Object.entries(steps).map(([name, ms]) => `${name.padEnd(24)} median ${median(ms).toFixed(1).padStart(7)} ms   max ${Math.max(...ms).toFixed(1).padStart(7)} ms`);
process.stdout.write(`edits from ${Math.round(editsFrom)} ms to ${Math.round(performance.now())} ms (for bench/profile.ts --skip-ms)\n`);
process.stdout.write(`start-up rehearsal of edits ${rehearsalMs.toFixed(1)} ms\n`);
process.stdout.write(`${N} resources (${providers} Providers, ${rules} RoutingRules, ${customers} Customers, ${teams} Teams, ${keys} VirtualKeys), ${changes} edits\n${rows.join('\n')}\n`);
