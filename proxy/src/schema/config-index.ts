// The index document (index.json) of the configuration the operator renders into Kubernetes, and
// its checksums: the operator <-> proxy contract (docs/kubernetes.md). One module for both sides,
// so the bytes the operator writes and the checks the proxy reads them with cannot drift: the
// operator imports it through contract.ts, the proxy's reader is config/kube-document.ts.
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { validator } from './validate.ts';

export const INDEX_CONFIGMAP = 'skybridge-config-index';
export const INDEX_KEY = 'index.json';
export const PART_KEY = 'config.part';
/**
 * A large index keeps `sources` (and so `managed`, which is its keys) in ConfigMaps of their own,
 * `skybridge-config-sources-N` (data key PART_KEY), listed in `sourceParts` with their checksums in
 * `checksums`: an edit then rewrites a small index, not every resource's entry.
 */
export const SOURCES_PART_PREFIX = 'skybridge-config-sources-';
export const SECRET_NAME = 'skybridge-secrets';
export const CONFIG_LABEL_SELECTOR = 'skybridge.dev/config=true';
/**
 * The secret values are split over at most this many Secrets of fixed names (`skybridge-secrets`,
 * `skybridge-secrets-1`, ...): fixed so RBAC can grant exactly them by name (resourceNames cannot
 * be prefixes) and each is watched by name.
 */
export const SECRET_SHARDS = 4;
export const secretShardName = (n: number): string => (n === 0 ? SECRET_NAME : `${SECRET_NAME}-${n}`);
export const SECRET_SHARD_NAMES: readonly string[] = Array.from({ length: SECRET_SHARDS }, (_, n) => secretShardName(n));

const IndexSchema = Type.Object({
  revision: Type.String({ minLength: 1 }),
  parts: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  checksums: Type.Record(Type.String(), Type.String()),
  secret: Type.String({ minLength: 1 }),
  /** Every Secret shard, in order (absent in indexes written before sharding: then just `secret`). */
  secrets: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: SECRET_SHARDS })),
  secretChecksum: Type.String({ minLength: 1 }),
  managed: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
  sources: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** ConfigMaps holding `sources` (then absent here), in order; their texts joined are its JSON. */
  sourceParts: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
});

export interface ConfigIndex {
  revision: string;
  parts: string[];
  checksums: Record<string, string>;
  secret: string;
  /** The Secret shards whose data, merged, is the secret values; `secretChecksum` covers the merge. */
  secrets: string[];
  secretChecksum: string;
  /** Ids per section (`providers`, `virtual_keys`, ...) that come from custom resources. */
  managed: Record<string, string[]>;
  /** `<section>/<id>` → the custom resource to edit, e.g. `VirtualKey team-a/checkout`. */
  sources: Record<string, string>;
  /** Where `sources` is when it is not inline (empty: inline, or an index from before sharding). */
  sourceParts: string[];
}

/** `managed` as `sources` implies it: per section, the ids, in order (sources' keys are sorted). */
export function managedFromSources(sources: Readonly<Record<string, string>>): Record<string, string[]> {
  const managed: Record<string, string[]> = {};
  for (const key of Object.keys(sources).sort()) {
    const slash = key.indexOf('/');
    if (slash > 0) (managed[key.slice(0, slash)] ??= []).push(key.slice(slash + 1));
  }
  return managed;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * sha256 of the text each name holds, computed once per text: the operator's render and a proxy's
 * reload hash only the parts that changed since the last time.
 */
export class ChecksumMemo {
  readonly #sums = new Map<string, { text: string; sum: string }>();
  /** Texts hashed (not reused). */
  hashed = 0;

  of(name: string, text: string): string {
    const known = this.#sums.get(name);
    if (known && known.text === text) return known.sum;
    const sum = sha256Hex(text);
    this.hashed++;
    this.#sums.set(name, { text, sum });
    return sum;
  }
}

/** The Secret's checksum as the contract defines it: `KEY=<base64>\n` lines in key order. */
export function secretChecksum(data: Readonly<Record<string, string>> | undefined): string {
  const d = data ?? {};
  return sha256Hex(Object.keys(d).sort().map((k) => `${k}=${d[k]}\n`).join(''));
}

/**
 * The Secret data key of one secret value: `<KIND>_<NAMESPACE>_<NAME>_<FIELD>` uppercased, every
 * character outside [A-Z0-9] turned into `_`. The document refers to it as `env.<key>`.
 */
export function secretKeyName(kind: string, namespace: string, name: string, field: string): string {
  return `${kind}_${namespace}_${name}_${field}`.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

const validateIndex = validator(IndexSchema);

/** index.json as the contract shapes it; throws Error naming what is wrong. */
export function parseIndex(text: string): ConfigIndex {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${INDEX_KEY} is not valid JSON: ${(err as Error).message}`);
  }
  const result = validateIndex(raw);
  if (Array.isArray(result)) throw new Error(`${INDEX_KEY} is malformed: ${result.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
  return { ...result, secrets: result.secrets ?? [result.secret], managed: result.managed ?? {}, sources: result.sources ?? {}, sourceParts: result.sourceParts ?? [] };
}

/**
 * The index with `sources` (and `managed`) filled in from its source parts when it has them
 * (schema/config-index.ts SOURCES_PART_PREFIX); an inline one as it is. A part missing or not
 * matching its checksum is a write in progress, like a document part.
 */
export function readSources(
  index: ConfigIndex,
  configMap: (name: string) => Readonly<Record<string, string>> | undefined,
  /** A part's checksum (the proxy's follower keeps those of parts it has read). */
  checksum: (name: string, text: string) => string = (_name, text) => sha256Hex(text),
  /** The last parts' texts and what they gave (the follower's): the same texts give the very same objects. */
  kept?: SourcesMemo,
): { state: 'complete'; index: ConfigIndex } | { state: 'partial' | 'invalid'; reason: string } {
  if (!index.sourceParts.length) return { state: 'complete', index };
  const texts: string[] = [];
  for (const name of index.sourceParts) {
    const expected = index.checksums[name];
    if (expected === undefined) return { state: 'invalid', reason: `${INDEX_KEY} lists sources part ${name} without a checksum` };
    const text = configMap(name)?.[PART_KEY];
    if (text === undefined) return { state: 'partial', reason: `sources part ${name} is missing` };
    if (checksum(name, text) !== expected) return { state: 'partial', reason: `sources part ${name} does not match its checksum in the index` };
    texts.push(text);
  }
  const last = kept?.last;
  if (last && !Object.keys(index.managed).length && last.texts.length === texts.length && last.texts.every((t, i) => t === texts[i])) {
    return { state: 'complete', index: { ...index, sources: last.sources, managed: last.managed } };
  }
  let sources: unknown;
  try {
    sources = JSON.parse(texts.join(''));
  } catch (err) {
    return { state: 'invalid', reason: `the sources parts are not valid JSON: ${(err as Error).message}` };
  }
  if (!sources || typeof sources !== 'object' || Array.isArray(sources) || Object.values(sources).some((v) => typeof v !== 'string')) {
    return { state: 'invalid', reason: 'the sources parts are not an object of strings' };
  }
  const record = sources as Record<string, string>;
  if (Object.keys(index.managed).length) return { state: 'complete', index: { ...index, sources: record } };
  const managed = managedFromSources(record);
  if (kept) kept.last = { texts, sources: record, managed };
  return { state: 'complete', index: { ...index, sources: record, managed } };
}

/** What readSources keeps between reads of one follower (at 2,000 resources `sources` is ~150 KiB of JSON). */
export interface SourcesMemo {
  last?: { texts: readonly string[]; sources: Record<string, string>; managed: Record<string, string[]> };
}
