// The configuration as the operator renders it into Kubernetes (the operator <-> proxy contract,
// docs/kubernetes.md), read back: an index ConfigMap, written last, naming the part ConfigMaps and
// the Secret with their checksums (shape and checksums: schema/config-index.ts). Pure functions:
// given what the informers hold, either the whole verified document or the reason it is not usable
// yet. A checksum that does not match is a write still in
// progress (the operator writes parts, then the Secret, then the index), not an error by itself.
import { resolvesEnvRef } from '../schema/env-ref.ts';
import { INDEX_CONFIGMAP, INDEX_KEY, PART_KEY, parseIndex, readSources, secretChecksum, secretKeyName, sha256Hex, ChecksumMemo, type ConfigIndex } from '../schema/config-index.ts';

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

/** Where the resources of the sections that resolve references sit, and the field naming each. */
const OWNED_AT: readonly { at: RegExp; section: string; idField?: string; list?: readonly string[] }[] = [
  { at: /^providers\.([^.[]+)/, section: 'providers' },
  { at: /^governance\.virtual_keys\[(\d+)\]/, section: 'virtual_keys', idField: 'id', list: ['governance', 'virtual_keys'] },
  { at: /^webhooks\[(\d+)\]/, section: 'webhooks', idField: 'name', list: ['webhooks'] },
  { at: /^mcp\.client_configs\[(\d+)\]/, section: 'mcp_clients', idField: 'client_id', list: ['mcp', 'client_configs'] },
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
  const prefixOf = new Map<string, string>(); // source -> the prefix of its entries
  for (const source of Object.values(index.sources)) {
    const m = /^(\S+) ([^/\s]+)\/(\S+)$/.exec(source);
    if (m) prefixOf.set(source, secretKeyName(m[1], m[2], m[3], ''));
  }
  const prefixes = new Set(prefixOf.values());
  // Every prefix ends in `_`: the longest one of the key's own `_`-ended prefixes that is listed (per
  // reference a walk over its name, not over every resource: documents hold thousands).
  const ownerPrefix = (key: string): string | undefined => {
    for (let i = key.lastIndexOf('_', key.length - 2); i > 0; i = key.lastIndexOf('_', i - 1)) {
      if (prefixes.has(key.slice(0, i + 1))) return key.slice(0, i + 1);
    }
    return undefined;
  };
  const sourceOf = (path: string): string | undefined => {
    for (const o of OWNED_AT) {
      const m = o.at.exec(path);
      if (!m) continue;
      if (!o.list) return index.sources[`${o.section}/${m[1]}`];
      let node: unknown = document;
      for (const seg of o.list) node = (node as Record<string, unknown> | undefined)?.[seg];
      const id = (Array.isArray(node) ? (node[Number(m[1])] as Record<string, unknown> | undefined) : undefined)?.[o.idField as string];
      return typeof id === 'string' ? index.sources[`${o.section}/${id}`] : undefined;
    }
    return undefined;
  };
  const problems: string[] = [];
  // The path is spelled out only for a reference: documents hold thousands of resources, and
  // building every node's path was most of the walk.
  const segments: (string | number)[] = [];
  const pathNow = () => segments.reduce<string>((p, s) => (typeof s === 'number' ? `${p}[${s}]` : p ? `${p}.${s}` : s), '');
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      const key = v.startsWith('env.') ? v.slice(4) : undefined;
      if (key === undefined || !secretKeys.has(key)) return;
      const path = pathNow();
      if (!resolvesEnvRef(path)) return;
      const source = sourceOf(path);
      const owner = ownerPrefix(key);
      const mine = source === undefined ? undefined : prefixOf.get(source);
      if (owner === mine) return;
      const whose = owner === undefined ? 'no resource' : `another resource (${owner.slice(0, -1)}_...)`;
      problems.push(`${path}${source ? ` (${source})` : ''}: env.${key} is a Secret entry rendered for ${whose}; a resource may use only the entries rendered for itself`);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        segments.push(i);
        walk(v[i]);
        segments.pop();
      }
    } else if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        segments.push(k);
        walk((v as Record<string, unknown>)[k]);
        segments.pop();
      }
    }
  };
  walk(document);
  return problems;
}

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
  const sourced = readSources(index, configMap, sum);
  if (sourced.state !== 'complete') return sourced.state === 'partial' ? { state: 'partial', revision, reason: sourced.reason } : { state: 'invalid', revision, reason: sourced.reason };
  index = sourced.index;
  const text = texts.join('');
  // Every part matched, so a wrong whole means the index itself is inconsistent (parts out of order).
  if (sha256Hex(text) !== revision) return { state: 'invalid', revision, reason: 'the assembled document does not match the index revision' };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    return { state: 'invalid', revision, reason: `the assembled document is not valid JSON: ${(err as Error).message}` };
  }
  const foreign = foreignReferences(document, index, merged.keys);
  if (foreign.length) return { state: 'invalid', revision, reason: `the document references Secret entries outside their own resources: ${foreign.join('; ')}` };
  return { state: 'complete', index, document, env: merged.env() };
}

