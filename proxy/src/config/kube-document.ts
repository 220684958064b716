// The configuration as the operator renders it into Kubernetes (the operator <-> proxy contract,
// docs/kubernetes.md), read back: an index ConfigMap, written last, naming the part ConfigMaps and
// the Secret with their checksums (shape and checksums: schema/config-index.ts). Pure functions:
// given what the informers hold, either the whole verified document or the reason it is not usable
// yet. A checksum that does not match is a write still in
// progress (the operator writes parts, then the Secret, then the index), not an error by itself.
import { resolvesEnvRef } from '../schema/env-ref.ts';
import { ParseMemo } from './parse-reusing.ts';
import { INDEX_CONFIGMAP, INDEX_KEY, PART_KEY, parseIndex, readSources, secretChecksum, secretKeyName, sha256Hex, ChecksumMemo, type ConfigIndex, type SourcesMemo } from '../schema/config-index.ts';

/** ConfigMap or Secret `.data` (a Secret's values base64), undefined when the object does not exist. */
export type DataLookup = (name: string) => Readonly<Record<string, string>> | undefined;

export type Assembly =
  /** No index ConfigMap: nothing rendered yet (or it was deleted). */
  | { state: 'absent' }
  /** A part or the Secret does not match the index: a write in progress, or one that never finished. */
  | { state: 'partial'; revision: string; reason: string }
  /** The index or the document cannot be read at all. */
  | { state: 'invalid'; revision: string | undefined; reason: string }
  | { state: 'complete'; index: ConfigIndex; document: unknown; env: Record<string, string> };

/** Where the resources of the sections that resolve references sit (the path's first segments), and the field naming each in a list. */
const OWNED_AT: readonly { list: readonly string[]; section: string; idField?: string }[] = [
  { list: ['providers'], section: 'providers' },
  { list: ['governance', 'virtual_keys'], section: 'virtual_keys', idField: 'id' },
  { list: ['webhooks'], section: 'webhooks', idField: 'name' },
  { list: ['mcp', 'client_configs'], section: 'mcp_clients', idField: 'client_id' },
];

/**
 * The rendered Secret holds every resource's credentials, so an entry rendered for a resource is
 * used by that resource alone: an `env.<KEY>` naming it anywhere else (another resource's extra
 * header, say, sending the key to a receiver of someone's choosing) is refused, and so is one, inside
 * a resource, naming an entry not rendered for it. An entry's name says its resource
 * (`secretKeyName`); where two resources' prefixes nest (`team`, `team-b`) the longer one owns what
 * it matches. Entries no listed resource owns (an index without `sources`) are not checked.
 */
export function foreignReferences(document: unknown, index: Pick<ConfigIndex, 'sources'>, secretKeys: ReadonlySet<string>): string[] {
  const owners = ownersOf(index.sources);
  const { prefixOf, sources, ownerPrefix } = owners;
  const sourceOf = (at: readonly (string | number)[]): string | undefined => {
    for (const o of OWNED_AT) {
      if (at.length <= o.list.length || !o.list.every((seg, i) => at[i] === seg)) continue;
      const which = at[o.list.length];
      if (!o.idField) return typeof which === 'string' ? sources.get(`${o.section}/${which}`) : undefined;
      let node: unknown = document;
      for (const seg of o.list) node = (node as Record<string, unknown> | undefined)?.[seg];
      const id = (Array.isArray(node) && typeof which === 'number' ? (node[which] as Record<string, unknown> | undefined) : undefined)?.[o.idField];
      return typeof id === 'string' ? sources.get(`${o.section}/${id}`) : undefined;
    }
    return undefined;
  };
  const problems: string[] = [];
  const check = (at: readonly (string | number)[], key: string, out: string[]) => {
    if (!secretKeys.has(key)) return;
    const path = pathOf(at);
    if (!resolvesEnvRef(path)) return;
    const source = sourceOf(at);
    const owner = ownerPrefix(key);
    const mine = source === undefined ? undefined : prefixOf.get(source);
    if (owner === mine) return;
    const whose = owner === undefined ? 'no resource' : `another resource (${owner.slice(0, -1)}_...)`;
    out.push(`${path}${source ? ` (${source})` : ''}: env.${key} is a Secret entry rendered for ${whose}; a resource may use only the entries rendered for itself`);
  };
  if (document === null || typeof document !== 'object') return problems;
  // The lists of resources and the objects holding them, found from the document's root.
  const lists = new Map<object, readonly string[]>();
  const holders = new Set<object>();
  for (const o of OWNED_AT) {
    let node: unknown = document;
    for (const seg of o.list) {
      if (node !== null && typeof node === 'object') holders.add(node);
      node = (node as Record<string, unknown> | undefined)?.[seg];
    }
    if (node !== null && typeof node === 'object') lists.set(node, o.list);
  }
  // In document order, as one walk over every env. string would give them. A resource's own
  // problems depend on its object, its place, the owners and the Secret's keys: kept per object
  // (a document parsed reusing the last one's objects checks its thousands of resources at the cost
  // of a lookup each).
  const walk = (node: object, at: readonly (string | number)[]): void => {
    const list = lists.get(node);
    const visit = (seg: string | number, v: unknown) => {
      if (typeof v === 'string') {
        if (v.startsWith('env.')) check([...at, seg], v.slice(4), problems);
      } else if (v !== null && typeof v === 'object') {
        if (list) {
          const kept = checkedResources.get(v);
          if (kept && kept.seg === seg && kept.owners === owners && kept.secretKeys === secretKeys && kept.list === list) {
            problems.push(...kept.problems);
            return;
          }
          const own: string[] = [];
          for (const e of envStrings(v)) check([...at, seg, ...e.at], e.key, own);
          checkedResources.set(v, { seg, owners, secretKeys, list, problems: own });
          problems.push(...own);
        } else if (holders.has(v) || lists.has(v)) walk(v, [...at, seg]);
        else for (const e of envStrings(v)) check([...at, seg, ...e.at], e.key, problems);
      }
    };
    if (Array.isArray(node)) for (let i = 0; i < node.length; i++) visit(i, node[i]);
    else for (const k of Object.keys(node)) visit(k, (node as Record<string, unknown>)[k]);
  };
  walk(document, []);
  return problems;
}

/** A listed resource's object and what foreignReferences found in it, with what that depended on. */
const checkedResources = new WeakMap<object, { seg: string | number; owners: Owners; secretKeys: ReadonlySet<string>; list: readonly string[]; problems: readonly string[] }>();

interface Owners {
  /** source -> the prefix of its entries */
  prefixOf: ReadonlyMap<string, string>;
  sources: ReadonlyMap<string, string>;
  /** The resource prefix a Secret entry's name has, if any. */
  ownerPrefix: (key: string) => string | undefined;
}

/** Worked out once per `sources` object (a follower reads the same one again while its parts are unchanged). */
const ownersBySources = new WeakMap<object, Owners>();
function ownersOf(sourcesRecord: Readonly<Record<string, string>>): Owners {
  const known = ownersBySources.get(sourcesRecord);
  if (known) return known;
  const prefixOf = new Map<string, string>();
  for (const source of Object.values(sourcesRecord)) {
    const m = /^(\S+) ([^/\s]+)\/(\S+)$/.exec(source);
    if (m) prefixOf.set(source, secretKeyName(m[1], m[2], m[3], ''));
  }
  const prefixes = new Set(prefixOf.values());
  const owners = new Map<string, string | undefined>();
  // Every prefix ends in `_`: the longest one of the key's own `_`-ended prefixes that is listed (per
  // reference a walk over its name, not over every resource: documents hold thousands).
  const ownerPrefix = (key: string): string | undefined => {
    if (owners.has(key)) return owners.get(key);
    let owner: string | undefined;
    for (let i = key.lastIndexOf('_', key.length - 2); i > 0; i = key.lastIndexOf('_', i - 1)) {
      if (prefixes.has(key.slice(0, i + 1))) {
        owner = key.slice(0, i + 1);
        break;
      }
    }
    owners.set(key, owner);
    return owner;
  };
  const out: Owners = { prefixOf, sources: new Map(Object.entries(sourcesRecord)), ownerPrefix };
  ownersBySources.set(sourcesRecord, out);
  return out;
}

/** An `env.<KEY>` string in a document: where it sits (segments from the node walked) and KEY. */
interface EnvString {
  at: readonly (string | number)[];
  key: string;
}

/**
 * Every `env.` string under each object, by identity: a document parsed reusing the objects of the
 * last one (parse-reusing.ts) is walked through its new objects only. Documents hold thousands of
 * resources; their objects are never changed once parsed.
 */
const envStringsOf = new WeakMap<object, readonly EnvString[]>();
const NONE: readonly EnvString[] = [];
function envStrings(node: object): readonly EnvString[] {
  const known = envStringsOf.get(node);
  if (known) return known;
  let out: EnvString[] | undefined;
  const add = (seg: string | number, v: unknown) => {
    if (typeof v === 'string') {
      if (v.startsWith('env.')) (out ??= []).push({ at: [seg], key: v.slice(4) });
    } else if (v !== null && typeof v === 'object') {
      for (const e of envStrings(v)) (out ??= []).push({ at: [seg, ...e.at], key: e.key });
    }
  };
  if (Array.isArray(node)) for (let i = 0; i < node.length; i++) add(i, node[i]);
  else for (const k of Object.keys(node)) add(k, (node as Record<string, unknown>)[k]);
  const result = out ?? NONE;
  envStringsOf.set(node, result);
  return result;
}

const pathOf = (segments: readonly (string | number)[]): string => segments.reduce<string>((p, s) => (typeof s === 'number' ? `${p}[${s}]` : p ? `${p}.${s}` : s), '');

/** The Secret's values, decoded: what `env.VAR` references in the document resolve against. */
export function secretEnv(data: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/**
 * What assemble keeps between reads, so a change to one resource (one part and the index rewritten)
 * hashes that part, not all of them: each part's checksum by its text, and the Secret shards' merge
 * while the shards are the same objects (an informer replaces only the objects that changed).
 */
export class AssemblyMemo {
  readonly #sums = new ChecksumMemo();
  /** The document's per-resource objects by text: an unchanged resource is the same object again. */
  readonly parsed = new ParseMemo();
  /** `sources` as last read from its parts: the same parts give the same object. */
  readonly sources: SourcesMemo = {};
  #secrets: { shards: readonly (Readonly<Record<string, string>> | undefined)[]; data: Record<string, string> | undefined; checksum: string; keys: ReadonlySet<string>; env?: Record<string, string> } | undefined;

  /** sha256 of a part's text, computed once per text. */
  checksum(name: string, text: string): string {
    return this.#sums.of(name, text);
  }

  /** Parts hashed (not reused). */
  get hashed(): number {
    return this.#sums.hashed;
  }

  /** The merged shards, their checksum and keys: computed again only when a shard is another object. */
  secrets(shards: readonly (Readonly<Record<string, string>> | undefined)[]): { data: Record<string, string> | undefined; checksum: string; keys: ReadonlySet<string>; env: () => Record<string, string> } {
    let s = this.#secrets;
    if (!s || s.shards.length !== shards.length || s.shards.some((x, i) => x !== shards[i])) {
      const data = mergeShards(shards);
      s = { shards, data, checksum: secretChecksum(data), keys: new Set(Object.keys(data ?? {})) };
      this.#secrets = s;
    }
    const entry = s;
    return { data: entry.data, checksum: entry.checksum, keys: entry.keys, env: () => (entry.env ??= secretEnv(entry.data)) };
  }
}

/** The shards' data merged (a key lives in one shard); undefined when none exists. */
function mergeShards(shards: readonly (Readonly<Record<string, string>> | undefined)[]): Record<string, string> | undefined {
  let data: Record<string, string> | undefined;
  for (const shard of shards) if (shard) data = { ...data, ...shard };
  return data;
}

/**
 * Reads the index, checks every part and the Secret against it, and joins the parts. `memo` (the
 * follower's) keeps the checksums of parts and Secret shards that did not change since the last read.
 */
export function assemble(configMap: DataLookup, secret: DataLookup, memo?: AssemblyMemo): Assembly {
  const sum = memo ? (name: string, text: string) => memo.checksum(name, text) : (_name: string, text: string) => sha256Hex(text);
  const indexData = configMap(INDEX_CONFIGMAP);
  if (!indexData) return { state: 'absent' };
  const indexText = indexData[INDEX_KEY];
  if (indexText === undefined) return { state: 'invalid', revision: undefined, reason: `ConfigMap ${INDEX_CONFIGMAP} has no ${INDEX_KEY}` };
  let index: ConfigIndex;
  try {
    index = parseIndex(indexText);
  } catch (err) {
    return { state: 'invalid', revision: undefined, reason: (err as Error).message };
  }
  const { revision } = index;
  const texts: string[] = [];
  for (const name of index.parts) {
    const expected = index.checksums[name];
    if (expected === undefined) return { state: 'invalid', revision, reason: `${INDEX_KEY} lists part ${name} without a checksum` };
    const text = configMap(name)?.[PART_KEY];
    if (text === undefined) return { state: 'partial', revision, reason: `part ${name} is missing` };
    if (sum(name, text) !== expected) return { state: 'partial', revision, reason: `part ${name} does not match its checksum in the index` };
    texts.push(text);
  }
  // The shards' data merged (a key lives in one shard); one checksum over the merge, as unsharded.
  // A missing shard counts as empty (a document without secrets needs none).
  const shards = index.secrets.map((name) => secret(name));
  const missing = index.secrets.filter((_, i) => !shards[i]);
  const merged = memo?.secrets(shards) ?? (() => {
    const data = mergeShards(shards);
    return { data, checksum: secretChecksum(data), keys: new Set(Object.keys(data ?? {})), env: () => secretEnv(data) };
  })();
  if (merged.checksum !== index.secretChecksum) {
    const reason = missing.length ? `Secret ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing` : `Secret ${index.secrets.join(', ')} does not match its checksum in the index`;
    return { state: 'partial', revision, reason };
  }
  const sourced = readSources(index, configMap, sum, memo?.sources);
  if (sourced.state !== 'complete') return sourced.state === 'partial' ? { state: 'partial', revision, reason: sourced.reason } : { state: 'invalid', revision, reason: sourced.reason };
  index = sourced.index;
  const text = texts.join('');
  // Every part matched, so a wrong whole means the index itself is inconsistent (parts out of order).
  if (sha256Hex(text) !== revision) return { state: 'invalid', revision, reason: 'the assembled document does not match the index revision' };
  let document: unknown;
  try {
    document = memo ? memo.parsed.parse(text) : JSON.parse(text);
  } catch (err) {
    return { state: 'invalid', revision, reason: `the assembled document is not valid JSON: ${(err as Error).message}` };
  }
  const foreign = foreignReferences(document, index, merged.keys);
  if (foreign.length) return { state: 'invalid', revision, reason: `the document references Secret entries outside their own resources: ${foreign.join('; ')}` };
  return { state: 'complete', index, document, env: merged.env() };
}

