// The operator's incremental path (translations, check results, laid-out fragments and render memos
// kept from one pass to the next) must give exactly what a pass from scratch gives, after any
// sequence of edits: random sequences of spec edits, broken and repaired references, conflicts,
// duplicate key values, deletions, re-creations and Secret rotations, compared step by step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { CheckMemo } from '../../proxy/src/contract.ts';
import { renderOutput, type RenderedOutput } from '../../operator/src/render/output.ts';
import { RenderMemo } from '../../operator/src/render/memo.ts';
import { desiredState, type DesiredState } from '../../operator/src/resources/desired.ts';
import { TranslationCache, type VersionedSecretLookup } from '../../operator/src/resources/translation-cache.ts';
import { translate } from '../../operator/src/resources/translate.ts';
import type { CustomResource, KindName } from '../../operator/src/resources/kinds.ts';
import { rehearseEdits } from '../../operator/src/rehearse.ts';

const NS = 'default';
/** Small parts and sources inline only up to 1 KiB: every edit sequence crosses part boundaries. */
const RENDER = { namespace: 'ns', maxPartBytes: 2048, inlineSourcesBytes: 1024 } as const;

function generator(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((s / 2 ** 31) * n);
  };
}

const ref = (key: string) => ({ secretKeyRef: { name: 'creds', key } });

/** One resource of a kind by number, in one of a few variants (some refer to what may not exist). */
function specOf(kind: KindName, i: number, variant: number): unknown {
  switch (kind) {
    case 'Provider':
      return { keys: [{ name: 'k', weight: 1, valueFrom: ref(variant === 3 ? 'missing' : `p-${i}`) }], network_config: { base_url: 'https://api.example.com', max_retries: variant }, custom_provider_config: { base_provider_type: 'openai' } };
    case 'Customer':
      return { name: `Customer ${i} v${variant}`, budget: { max_limit: 1000 + variant, reset_duration: '1M' } };
    case 'Team':
      return { name: `Team ${i} v${variant}`, customer_id: `customer-${(i + variant) % 4}`, budget: { max_limit: 100, reset_duration: '1M' }, rateLimit: { request_max_limit: 600 + variant, request_reset_duration: '1m' } };
    case 'VirtualKey':
      return {
        description: `v${variant}`,
        // Variant 3 shares another key's value (DuplicateValue for the newer one).
        valueFrom: ref(variant === 3 ? `vk-${(i + 1) % 12}` : `vk-${i}`),
        ...(variant % 2 ? { team_id: `team-${(i + variant) % 5}` } : {}),
        provider_configs: [
          { provider: `p-${i % 5}`, allowed_models: ['*'], key_ids: ['*'] },
          ...(variant >= 2 ? [{ provider: `p-${(i + variant) % 6}`, allowed_models: ['gpt-4o'], key_ids: ['*'] }] : []),
        ],
      };
    case 'RoutingRule':
      return {
        description: `v${variant}`,
        // Variant 2 takes another rule's name: a Conflict for the newer one.
        ...(variant === 2 ? { name: `rule-${(i + 1) % 6}` } : {}),
        cel_expression: `headers["x-route"] == "r${i}"`,
        targets: [{ provider: `p-${(i + variant) % 6}`, model: 'gpt-4o', weight: 1 }],
      };
    default:
      throw new Error(kind);
  }
}

const UNIVERSE: [KindName, string, number][] = [
  ...Array.from({ length: 6 }, (_, i): [KindName, string, number] => ['Provider', `p-${i}`, i]),
  ...Array.from({ length: 4 }, (_, i): [KindName, string, number] => ['Customer', `customer-${i}`, i]),
  ...Array.from({ length: 5 }, (_, i): [KindName, string, number] => ['Team', `team-${i}`, i]),
  ...Array.from({ length: 12 }, (_, i): [KindName, string, number] => ['VirtualKey', `vk-${i}`, i]),
  ...Array.from({ length: 6 }, (_, i): [KindName, string, number] => ['RoutingRule', `rule-${i}`, i]),
];

interface World {
  resources: Map<string, CustomResource>;
  data: Record<string, string>;
  version: number;
  clock: number;
}

function makeResource(world: World, kind: KindName, name: string, i: number, variant: number, generation = 1, uid?: string, created?: CustomResource['metadata']['creationTimestamp']): CustomResource {
  return {
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind,
    metadata: { name, namespace: NS, uid: uid ?? `uid-${name}-${world.clock}`, generation, creationTimestamp: created ?? new Date(Date.UTC(2025, 0, 1) + 1000 * world.clock++).toISOString() },
    spec: specOf(kind, i, variant),
  };
}

/** One random change: an edit, a deletion, a (re-)creation or a Secret value rotated. */
function step(world: World, rand: (n: number) => number): void {
  const [kind, name, i] = UNIVERSE[rand(UNIVERSE.length)];
  const key = `${kind}/${name}`;
  const existing = world.resources.get(key);
  const roll = rand(10);
  if (roll === 0) {
    const secret = rand(2) ? `p-${rand(6)}` : `vk-${rand(12)}`;
    world.data[secret] = Buffer.from(`rotated-${world.clock++}-${secret}`).toString('base64');
    world.version++;
  } else if (roll === 1 && existing) {
    world.resources.delete(key);
  } else if (existing) {
    const g = (existing.metadata.generation ?? 1) + 1;
    world.resources.set(key, makeResource(world, kind, name, i, rand(4), g, existing.metadata.uid, existing.metadata.creationTimestamp));
  } else {
    world.resources.set(key, makeResource(world, kind, name, i, rand(4)));
  }
}

function lookupOf(world: World): VersionedSecretLookup {
  const data = { ...world.data };
  const version = String(world.version);
  return {
    get: (ns, name) => (ns === NS && name === 'creds' ? data : undefined),
    version: (ns, name) => (ns === NS && name === 'creds' ? version : undefined),
  };
}

/** What a pass decides and writes, in a form that compares by value. */
function outcome(desired: DesiredState, out: RenderedOutput) {
  return {
    verdicts: [...desired.verdicts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    unattributed: desired.unattributed,
    warnings: desired.warnings,
    input: desired.input,
    revision: out.revision,
    objects: [...out.parts, ...out.sourceParts, ...out.secrets, out.index].map((o) => ({ kind: o.kind, name: o.metadata.name, data: o.data })),
  };
}

test('after any sequence of edits (rehearsed ones first or not), the incremental pass decides and renders exactly what a pass from scratch does', () => {
  const STEPS = 30;
  const reasons = new Set<string>();
  let rehearsed = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const rand = generator(seed);
    const world: World = { resources: new Map(), data: {}, version: 1, clock: 0 };
    for (let i = 0; i < 6; i++) world.data[`p-${i}`] = Buffer.from(`sk-provider-${i}`).toString('base64');
    for (let i = 0; i < 12; i++) world.data[`vk-${i}`] = Buffer.from(`sk-bf-key-${i}`).toString('base64');
    for (const [kind, name, i] of UNIVERSE) if (rand(3)) world.resources.set(`${kind}/${name}`, makeResource(world, kind, name, i, 0));

    // The controller's memos, kept over the whole sequence.
    const translations = new TranslationCache();
    const checkMemo = new CheckMemo();
    const texts = new WeakMap<object, string>();
    const renderMemo = new RenderMemo();
    let edits = 0;
    for (let n = 0; n < STEPS; n++) {
      if (n > 0) step(world, rand);
      const list = [...world.resources.values()];
      const lookup = lookupOf(world);
      translations.retain(list);
      const kept = desiredState(list, lookup, undefined, (c) => translations.translate(c, lookup), checkMemo);
      const incremental = outcome(kept, renderOutput(kept.input, { ...RENDER, textCache: texts, memo: renderMemo }));
      // From scratch: fresh translations (deep copies, so no object is known), no memo.
      const copies = list.map((r) => structuredClone(r));
      const fresh = desiredState(copies, lookupOf(world), undefined, translate);
      const scratch = outcome(fresh, renderOutput(fresh.input, RENDER));
      assert.deepEqual(incremental, scratch, `seed ${seed}, step ${n}`);
      // Half the sequences rehearse edits after the first pass, as the controller does (rehearse.ts):
      // what follows must still be what a pass from scratch gives.
      if (n === 0 && seed % 2 === 0) {
        const translator = (c: CustomResource) => translations.translate(c, lookup);
        rehearsed += rehearseEdits(list, lookup, translator, checkMemo, (d) => void renderOutput(d.input, { ...RENDER, textCache: texts, memo: renderMemo }));
      }
      edits++;
      for (const v of kept.verdicts.values()) reasons.add(v.reason);
    }
    assert.equal(edits, STEPS);
  }
  assert.ok(rehearsed >= 8, `${rehearsed} edits rehearsed`);
  // The sequences reach every kind of verdict, not only the happy path.
  assert.deepEqual([...reasons].sort(), ['Conflict', 'Degraded', 'DuplicateValue', 'ReferenceNotFound', 'SecretNotFound', 'Valid']);
});

test('an edit right after a rehearsal is rendered, though it has the generation the rehearsal used', () => {
  const world: World = { resources: new Map(), data: {}, version: 1, clock: 0 };
  for (let i = 0; i < 6; i++) world.data[`p-${i}`] = Buffer.from(`sk-provider-${i}`).toString('base64');
  for (let i = 0; i < 12; i++) world.data[`vk-${i}`] = Buffer.from(`sk-bf-key-${i}`).toString('base64');
  for (const [kind, name, i] of UNIVERSE) world.resources.set(`${kind}/${name}`, makeResource(world, kind, name, i, 0));
  const translations = new TranslationCache();
  const checkMemo = new CheckMemo();
  const lookup = lookupOf(world);
  const translator = (c: CustomResource) => translations.translate(c, lookup);
  const pass = () => desiredState([...world.resources.values()], lookup, undefined, translator, checkMemo);
  pass();
  assert.equal(rehearseEdits([...world.resources.values()], lookup, translator, checkMemo, () => {}), 4);
  // Each rehearsed kind's first resource edited for real, to the next generation.
  for (const [kind, name, i] of (['VirtualKey', 'Provider', 'RoutingRule', 'Team'] as const).map((k) => UNIVERSE.find(([u]) => u === k) as [KindName, string, number])) {
    const r = world.resources.get(`${kind}/${name}`) as CustomResource;
    world.resources.set(`${kind}/${name}`, makeResource(world, kind, name, i, 2, 2, r.metadata.uid, r.metadata.creationTimestamp));
  }
  const document = pass().input.document as {
    providers: Record<string, { network_config: { max_retries: number } }>;
    governance: { virtual_keys: { id: string; description: string }[]; routing_rules: { id: string; description: string }[]; teams: { id: string; name: string }[] };
  };
  assert.equal(document.governance.virtual_keys.find((k) => k.id === 'vk-0')?.description, 'v2');
  assert.equal(document.providers['p-0'].network_config.max_retries, 2);
  assert.equal(document.governance.routing_rules.find((r) => r.id === 'rule-0')?.description, 'v2');
  assert.equal(document.governance.teams.find((t) => t.id === 'team-0')?.name, 'Team 0 v2');
});

test('a newer key with a served key\'s value stays refused while the served one is edited, and is served once that one takes another value, as from scratch', () => {
  const world: World = { resources: new Map(), data: {}, version: 1, clock: 0 };
  for (let i = 0; i < 6; i++) world.data[`p-${i}`] = Buffer.from(`sk-provider-${i}`).toString('base64');
  for (let i = 0; i < 12; i++) world.data[`vk-${i}`] = Buffer.from(`sk-bf-key-${i}`).toString('base64');
  for (let i = 0; i < 6; i++) world.resources.set(`Provider/p-${i}`, makeResource(world, 'Provider', `p-${i}`, i, 0));
  // vk-2 first (older, served); vk-1's variant 3 takes vk-2's Secret entry as its value.
  world.resources.set('VirtualKey/vk-2', makeResource(world, 'VirtualKey', 'vk-2', 2, 0));
  world.resources.set('VirtualKey/vk-1', makeResource(world, 'VirtualKey', 'vk-1', 1, 3));
  world.resources.set('VirtualKey/vk-4', makeResource(world, 'VirtualKey', 'vk-4', 4, 0));
  const translations = new TranslationCache();
  const checkMemo = new CheckMemo();
  const edit = (name: string, i: number, variant: number) => {
    const r = world.resources.get(`VirtualKey/${name}`) as CustomResource;
    world.resources.set(`VirtualKey/${name}`, makeResource(world, 'VirtualKey', name, i, variant, (r.metadata.generation ?? 1) + 1, r.metadata.uid, r.metadata.creationTimestamp));
  };
  const pass = (what: string) => {
    const list = [...world.resources.values()];
    const lookup = lookupOf(world);
    const kept = desiredState(list, lookup, undefined, (c) => translations.translate(c, lookup), checkMemo);
    const fresh = desiredState(list.map((r) => structuredClone(r)), lookupOf(world), undefined, translate);
    assert.deepEqual(outcome(kept, renderOutput(kept.input, RENDER)), outcome(fresh, renderOutput(fresh.input, RENDER)), what);
    return kept.verdicts;
  };
  const duplicate = (verdicts: Map<string, { reason: string; message: string }>) => {
    const v = verdicts.get(`VirtualKey ${NS}/vk-1`);
    return v?.reason === 'DuplicateValue' && v.message.includes(`VirtualKey ${NS}/vk-2`);
  };
  assert.ok(duplicate(pass('first pass')));
  // Edits that keep every claim (the served key's description, another key's): the refusal stands.
  for (const variant of [2, 0, 2]) {
    edit('vk-2', 2, variant);
    assert.ok(duplicate(pass(`vk-2 edited to variant ${variant}`)), `vk-2 variant ${variant}`);
  }
  edit('vk-4', 4, 2);
  assert.ok(duplicate(pass('vk-4 edited')));
  // The refused key edited again, still with the same value: still refused.
  edit('vk-1', 1, 3);
  assert.ok(duplicate(pass('vk-1 edited')));
  // The served key takes another value: the newer one's value is its own now (variant 3 also names
  // a team that does not exist, so it is held for that, not for its value).
  edit('vk-2', 2, 3);
  const after = pass('vk-2 takes vk-3\'s value');
  assert.equal(after.get(`VirtualKey ${NS}/vk-1`)?.reason, 'ReferenceNotFound');
  assert.ok(!duplicate(after));
});
