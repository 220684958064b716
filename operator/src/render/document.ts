// Accepted resources -> the GatewayConfig document, plus which CR each part of it came from.
// Pure and order-independent: maps are keyed, lists sorted by id, so any order of the same
// resources gives the same document.
import type { ManagedSection } from './contract.ts';

export interface SourcedFragment {
  section: ManagedSection;
  id: string;
  value: Record<string, unknown>;
  /** `<Kind> <namespace>/<name>` of the CR it came from. */
  source: string;
  /** Where in the CR's spec it came from, when not the whole spec (`budget` for a key's inline budget). */
  specPath?: string;
}

export interface Owner {
  source: string;
  specPath: string;
}

export interface BuiltDocument {
  document: Record<string, unknown>;
  /** JSON path of each resource in the document (`providers.openai`, `governance.virtual_keys[2]`) -> its CR. */
  owners: Map<string, Owner>;
  managed: Partial<Record<ManagedSection, string[]>>;
  sources: Record<string, string>;
}

interface Placement {
  path: readonly string[];
  /** A map keyed by id (providers) rather than a list of objects carrying their id. */
  keyed?: boolean;
}

/** Where each section lives in config.json. */
export const PLACEMENT: Readonly<Record<ManagedSection, Placement>> = {
  providers: { path: ['providers'], keyed: true },
  virtual_keys: { path: ['governance', 'virtual_keys'] },
  budgets: { path: ['governance', 'budgets'] },
  rate_limits: { path: ['governance', 'rate_limits'] },
  routing_rules: { path: ['governance', 'routing_rules'] },
  plugins: { path: ['plugins'] },
  webhooks: { path: ['webhooks'] },
  mcp_clients: { path: ['mcp', 'client_configs'] },
  teams: { path: ['governance', 'teams'] },
  customers: { path: ['governance', 'customers'] },
};

const byId = (a: SourcedFragment, b: SourcedFragment) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A section as the last build laid it out: its fragments as given, and in id order. */
interface SectionLayout {
  given: readonly SourcedFragment[];
  sorted: SourcedFragment[];
  /** sorted[i] is given[order[i]]. */
  order: number[];
  ids: string[];
}

/**
 * The last build's layout of each section, and its `sources`. An edit that adds, deletes or renames
 * no resource gives each section the same ids from the same sources at the same positions: the id
 * order, the `managed` ids and the `sources` object are the last ones then, so a change to one
 * resource is neither sorted nor listed again with the thousands of others (and the steps after,
 * comparing `sources` entry by entry, know it by identity).
 */
let lastLayout: { sections: Map<ManagedSection, SectionLayout>; sources: Record<string, string> } | undefined;

/** Same ids from the same sources at the same positions: the sort and the `sources` entries are the same. */
function sameIdentities(a: readonly SourcedFragment[], b: readonly SourcedFragment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && (a[i].id !== b[i].id || a[i].source !== b[i].source)) return false;
  return true;
}

function layoutSection(given: SourcedFragment[], last: SectionLayout | undefined): { layout: SectionLayout; kept: boolean } {
  if (last && sameIdentities(last.given, given)) {
    const sorted = last.order.map((i) => given[i]);
    return { layout: { given, sorted, order: last.order, ids: last.ids }, kept: true };
  }
  const order = given.map((_, i) => i).sort((a, b) => byId(given[a], given[b]));
  const sorted = order.map((i) => given[i]);
  return { layout: { given, sorted, order, ids: sorted.map((f) => f.id) }, kept: false };
}

/** Ids must be unique per section (the caller resolves conflicts first). */
export function buildDocument(fragments: readonly SourcedFragment[]): BuiltDocument {
  const document: Record<string, unknown> = {};
  const managed: Partial<Record<ManagedSection, string[]>> = {};
  // One pass to group (thousands of fragments, ten sections), then each section in id order.
  const bySection = new Map<ManagedSection, SourcedFragment[]>();
  for (const f of fragments) {
    const list = bySection.get(f.section);
    if (list) list.push(f);
    else bySection.set(f.section, [f]);
  }
  const sections = new Map<ManagedSection, SectionLayout>();
  let sourcesKept = lastLayout !== undefined;
  const placed: { at: string; keyed: boolean; list: SourcedFragment[] }[] = [];
  for (const section of SECTIONS) {
    const given = bySection.get(section);
    const last = lastLayout?.sections.get(section);
    if (!given?.length) {
      if (last) sourcesKept = false;
      continue;
    }
    const { layout, kept } = layoutSection(given, last);
    sections.set(section, layout);
    if (!kept) sourcesKept = false;
    const list = layout.sorted;
    const { path, keyed } = PLACEMENT[section];
    const parent = ensurePath(document, path.slice(0, -1));
    const leaf = path[path.length - 1];
    if (keyed) {
      const map: Record<string, unknown> = {};
      for (const f of list) map[f.id] = f.value;
      parent[leaf] = map;
    } else {
      parent[leaf] = list.map((f) => f.value);
    }
    placed.push({ at: path.join('.'), keyed: keyed === true, list });
    managed[section] = layout.ids;
  }
  let sources: Record<string, string>;
  if (sourcesKept && lastLayout) sources = lastLayout.sources;
  else {
    sources = {};
    for (const { list } of placed) for (const f of list) sources[`${f.section}/${f.id}`] = f.source;
  }
  lastLayout = { sections, sources };
  // Read only to place an error on its resource: made when first asked for.
  let owners: Map<string, Owner> | undefined;
  const ownersOf = (): Map<string, Owner> => {
    if (owners) return owners;
    owners = new Map();
    for (const { at, keyed, list } of placed) {
      list.forEach((f, i) => (owners as Map<string, Owner>).set(keyed ? `${at}.${f.id}` : `${at}[${i}]`, { source: f.source, specPath: f.specPath ?? '' }));
    }
    return owners;
  };
  return {
    document,
    get owners() {
      return ownersOf();
    },
    managed,
    sources,
  };
}

const SECTIONS = (Object.keys(PLACEMENT) as ManagedSection[]).sort();

function ensurePath(root: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  let node = root;
  for (const seg of path) {
    node[seg] ??= {};
    node = node[seg] as Record<string, unknown>;
  }
  return node;
}

/**
 * The CR owning a config path such as `governance.virtual_keys[2].provider_configs[0].provider`, and
 * the path within its spec (`provider_configs[0].provider`), or undefined for a path no CR owns.
 */
export function ownerOf(owners: ReadonlyMap<string, Owner>, path: string): { source: string; specPath: string } | undefined {
  for (const [prefix, owner] of owners) {
    let rest: string;
    if (path === prefix) rest = '';
    else if (path.startsWith(`${prefix}.`)) rest = path.slice(prefix.length + 1);
    else if (path.startsWith(`${prefix}[`)) rest = path.slice(prefix.length);
    else continue;
    const joined = owner.specPath && rest ? (rest.startsWith('[') ? `${owner.specPath}${rest}` : `${owner.specPath}.${rest}`) : owner.specPath || rest;
    return { source: owner.source, specPath: joined };
  }
  return undefined;
}
