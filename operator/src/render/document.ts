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
  const owners = new Map<string, Owner>();
  const managed: Partial<Record<ManagedSection, string[]>> = {};
  const sources: Record<string, string> = {};
  const sections = (Object.keys(PLACEMENT) as ManagedSection[]).sort();
  for (const section of sections) {
    const list = fragments.filter((f) => f.section === section).sort(byId);
    if (!list.length) continue;
    const { path, keyed } = PLACEMENT[section];
    const parent = ensurePath(document, path.slice(0, -1));
    const leaf = path[path.length - 1];
    const at = path.join('.');
    if (keyed) {
      const map: Record<string, unknown> = {};
      for (const f of list) {
        map[f.id] = f.value;
        owners.set(`${at}.${f.id}`, { source: f.source, specPath: f.specPath ?? '' });
      }
      parent[leaf] = map;
    } else {
      parent[leaf] = list.map((f) => f.value);
      list.forEach((f, i) => owners.set(`${at}[${i}]`, { source: f.source, specPath: f.specPath ?? '' }));
    }
    managed[section] = list.map((f) => f.id);
    for (const f of list) sources[`${section}/${f.id}`] = f.source;
  }
  return { document, owners, managed, sources };
}

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
