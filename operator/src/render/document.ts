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

/** Ids must be unique per section (the caller resolves conflicts first). */
export function buildDocument(fragments: readonly SourcedFragment[]): BuiltDocument {
  const document: Record<string, unknown> = {};
  const managed: Partial<Record<ManagedSection, string[]>> = {};
  const sources: Record<string, string> = {};
  // One pass to group (thousands of fragments, ten sections), then each section sorted by id.
  const bySection = new Map<ManagedSection, SourcedFragment[]>();
  for (const f of fragments) {
    const list = bySection.get(f.section);
    if (list) list.push(f);
    else bySection.set(f.section, [f]);
  }
  const placed: { at: string; keyed: boolean; list: SourcedFragment[] }[] = [];
  for (const section of SECTIONS) {
    const list = bySection.get(section)?.sort(byId);
    if (!list?.length) continue;
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
    managed[section] = list.map((f) => f.id);
    for (const f of list) sources[`${section}/${f.id}`] = f.source;
  }
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
