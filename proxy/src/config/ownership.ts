// Who owns each object of the configuration document. Objects in the seed (config.json, or the
// environment without one) are seed-managed: the file is their only source, /api cannot change
// them. Objects written through /api are store-managed: they are kept apart in the config store and
// laid over every new seed, so an edit of config.json or a restart never drops them. When the seed
// and the store both hold an object under one id (or the result would not validate: a duplicate
// name, a reference to something the seed no longer has), the seed wins and the store's object is
// set aside: kept in the store, not served, and reported until the clash is resolved.
import type { GatewayConfig } from '../schema/gateway.ts';
import type { FieldError } from '../schema/validate.ts';
import { ruleId } from '../routing/rules.ts';

/** A collection of objects with ids, where config.json keeps it. Keys match the operator's `sources`. */
interface ObjectSection {
  section: string;
  label: string;
  path: readonly string[];
  /** A map keyed by id (providers) rather than a list of objects carrying their id. */
  keyed?: boolean;
  id(value: Record<string, unknown>): string;
}

const byId = (v: Record<string, unknown>) => String(v.id);
const byName = (v: Record<string, unknown>) => String(v.name);

export const OBJECT_SECTIONS: readonly ObjectSection[] = [
  { section: 'providers', label: 'provider', path: ['providers'], keyed: true, id: () => '' },
  // Each client setting is owned on its own: one set in config.json is the file's, one set through
  // /api (PUT /api/config) is kept in the store and laid over every new seed like any object.
  { section: 'client', label: 'client setting', path: ['client'], keyed: true, id: () => '' },
  { section: 'budgets', label: 'budget', path: ['governance', 'budgets'], id: byId },
  { section: 'rate_limits', label: 'rate limit', path: ['governance', 'rate_limits'], id: byId },
  { section: 'customers', label: 'customer', path: ['governance', 'customers'], id: byId },
  { section: 'teams', label: 'team', path: ['governance', 'teams'], id: byId },
  { section: 'virtual_keys', label: 'virtual key', path: ['governance', 'virtual_keys'], id: byId },
  { section: 'model_configs', label: 'model config', path: ['governance', 'model_configs'], id: byId },
  { section: 'pricing_overrides', label: 'pricing override', path: ['governance', 'pricing_overrides'], id: byId },
  { section: 'routing_rules', label: 'routing rule', path: ['governance', 'routing_rules'], id: (v) => ruleId(v as { name: string }) },
  { section: 'plugins', label: 'plugin', path: ['plugins'], id: byName },
  { section: 'webhooks', label: 'webhook', path: ['webhooks'], id: byName },
  { section: 'mcp_clients', label: 'MCP client', path: ['mcp', 'client_configs'], id: (v) => String(v.client_id ?? v.name) },
];

const SECTION_BY_NAME = new Map(OBJECT_SECTIONS.map((s) => [s.section, s]));

export const sectionLabel = (section: string): string => SECTION_BY_NAME.get(section)?.label ?? section;

/** One object of the document: `key` is `<section>/<id>`. */
export interface DocObject {
  section: string;
  id: string;
  value: unknown;
}

export const objectKey = (o: { section: string; id: string }): string => `${o.section}/${o.id}`;

/** A store-managed object that is not served, and why. */
export interface SetAside {
  section: string;
  id: string;
  reason: string;
}

function container(doc: unknown, path: readonly string[]): unknown {
  let node = doc;
  for (const seg of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

/** Every object of `doc`, in document order, with the JSON path it sits at. */
function located(doc: GatewayConfig): (DocObject & { at: string })[] {
  const out: (DocObject & { at: string })[] = [];
  for (const s of OBJECT_SECTIONS) {
    const c = container(doc, s.path);
    const at = s.path.join('.');
    if (s.keyed) {
      if (c && typeof c === 'object' && !Array.isArray(c)) for (const [id, value] of Object.entries(c)) out.push({ section: s.section, id, value, at: `${at}.${id}` });
    } else if (Array.isArray(c)) {
      c.forEach((value: unknown, i) => {
        if (value && typeof value === 'object' && !Array.isArray(value)) out.push({ section: s.section, id: s.id(value as Record<string, unknown>), value, at: `${at}[${i}]` });
      });
    }
  }
  return out;
}

export function objectsOf(doc: GatewayConfig): DocObject[] {
  return located(doc).map(({ section, id, value }) => ({ section, id, value }));
}

export function objectKeys(doc: GatewayConfig): Set<string> {
  const steps = objectKeysSteps(doc);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Objects looked at between two yields of objectKeysSteps. */
const OBJECTS_PER_STEP = 250;

/**
 * objectKeys as steps: it yields after every OBJECTS_PER_STEP objects of a list (10,000 virtual
 * keys), so a reload can leave the event loop free between them (config/steps.ts runInSteps).
 * The keys of located(), without its paths and records.
 */
export function* objectKeysSteps(doc: GatewayConfig): Generator<void, Set<string>> {
  const keys = new Set<string>();
  let n = 0;
  for (const s of OBJECT_SECTIONS) {
    const c = container(doc, s.path);
    if (s.keyed) {
      if (c && typeof c === 'object' && !Array.isArray(c)) for (const id of Object.keys(c)) keys.add(objectKey({ section: s.section, id }));
    } else if (Array.isArray(c)) {
      for (const value of c as unknown[]) {
        if (value && typeof value === 'object' && !Array.isArray(value)) keys.add(objectKey({ section: s.section, id: s.id(value as Record<string, unknown>) }));
        if (++n % OBJECTS_PER_STEP === 0) yield;
      }
    }
  }
  return keys;
}

/** `objects` added to a copy of `doc`, each at the end of its section. */
function overlay(doc: GatewayConfig, objects: readonly DocObject[]): GatewayConfig {
  const out = structuredClone(doc) as Record<string, unknown>;
  for (const o of objects) {
    const s = SECTION_BY_NAME.get(o.section);
    if (!s) continue;
    let node = out;
    for (const seg of s.path.slice(0, -1)) {
      if (!node[seg] || typeof node[seg] !== 'object') node[seg] = {};
      node = node[seg] as Record<string, unknown>;
    }
    const leaf = s.path[s.path.length - 1];
    if (s.keyed) {
      node[leaf] ??= {};
      (node[leaf] as Record<string, unknown>)[o.id] = structuredClone(o.value);
    } else {
      node[leaf] ??= [];
      (node[leaf] as unknown[]).push(structuredClone(o.value));
    }
  }
  return out as GatewayConfig;
}

/**
 * The served document: the seed with every store object laid over it, except those that clash with
 * the seed (same id) or that make the document invalid (`check` returns its field errors), which are
 * set aside. Errors that name no store object are the seed's own and are returned for the caller.
 */
export function compose(seed: GatewayConfig, store: readonly DocObject[], check: (doc: GatewayConfig) => FieldError[]): { document: GatewayConfig; setAside: SetAside[]; errors: FieldError[] } {
  const seedKeys = objectKeys(seed);
  const setAside: SetAside[] = [];
  let kept: DocObject[] = [];
  for (const o of store) {
    if (seedKeys.has(objectKey(o))) setAside.push({ section: o.section, id: o.id, reason: `the configuration file also defines ${sectionLabel(o.section)} '${o.id}', and the file wins` });
    else kept.push(o);
  }
  // Each round sets aside at least one object or ends: at most one round per store object.
  for (;;) {
    const document = overlay(seed, kept);
    const errors = check(document);
    if (!errors.length) return { document, setAside, errors };
    const places = located(document).filter((l) => !seedKeys.has(objectKey(l)));
    const blamed = new Map<string, string>();
    const unblamed: FieldError[] = [];
    for (const e of errors) {
      const hit = places.find((p) => e.path === p.at || e.path.startsWith(`${p.at}.`) || e.path.startsWith(`${p.at}[`));
      if (hit) {
        const key = objectKey(hit);
        if (!blamed.has(key)) blamed.set(key, `${e.path.slice(hit.at.length).replace(/^\./, '') || '(object)'}: ${e.message}`);
      } else unblamed.push(e);
    }
    if (!blamed.size) return { document, setAside, errors: unblamed };
    for (const [key, why] of blamed) {
      const o = kept.find((k) => objectKey(k) === key)!;
      setAside.push({ section: o.section, id: o.id, reason: `it does not fit the configuration file's objects (${why})` });
    }
    kept = kept.filter((k) => !blamed.has(objectKey(k)));
  }
}
