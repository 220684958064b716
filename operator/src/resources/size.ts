// Size ceilings per CR and together (render/limits.ts). A CR whose own share cannot fit anywhere is
// refused alone; when the accepted CRs together overflow the Secret shards or the index, the newest
// ones are left out (as with conflicts, a new CR never evicts an old one), each told why and by how much.
import { Buffer } from 'node:buffer';
import type { BuiltDocument } from '../render/document.ts';
import { formatBytes, packSecrets, secretEntryBytes, type SizeLimits } from '../render/limits.ts';
import { MAX_PART_BYTES } from '../render/shard.ts';
import { stableStringify } from '../render/stable-json.ts';
import { INLINE_SOURCES_BYTES } from '../render/output.ts';
import { CUT_EVERY } from '../render/parts.ts';
import { sameEntries } from '../render/memo.ts';

/** What one part costs in the index: its name in `parts` and its checksum. */
const PART_ENTRY_BYTES = 160;
import type { Rejection, Translation } from './translate.ts';

const tooLarge = (message: string): Rejection => ({ reason: 'TooLarge', message });

const secretBytes = (data: Readonly<Record<string, string>>): number => Object.entries(data).reduce((n, [k, v]) => n + secretEntryBytes(k, v), 0);
const capacity = (l: SizeLimits): string => `${l.secretShards} Secret shards of ${formatBytes(l.secretShardBytes)}`;

/** A CR that could not be rendered even alone. */
export function tooLargeAlone(t: Translation, limits: SizeLimits): Rejection | undefined {
  for (const [key, value] of Object.entries(t.secrets)) {
    const size = secretEntryBytes(key, value);
    if (size > limits.secretShardBytes) {
      return tooLarge(`its secret value ${key} is ${formatBytes(size)}; one value can be at most ${formatBytes(limits.secretShardBytes)} (one rendered Secret shard). It is left out of the rendered configuration`);
    }
  }
  const total = secretBytes(t.secrets);
  if (!packSecrets(t.secrets, limits.secretShardBytes, limits.secretShards)) {
    return tooLarge(`its secret values total ${formatBytes(total)}, more than the ${capacity(limits)} hold. It is left out of the rendered configuration`);
  }
  return undefined;
}

/** The index entries one fragment adds (`sources` line and `managed` id, as stableStringify lays them out). */
function indexEntryBytes(section: string, id: string, ref: string): number {
  return Buffer.byteLength(`    ${JSON.stringify(`${section}/${id}`)}: ${JSON.stringify(ref)},\n      ${JSON.stringify(id)},\n`, 'utf8');
}

/** A fragment's compact JSON length, once per fragment (kept translations hand the same objects). */
const fragmentChars = new WeakMap<object, number>();

/** About the length of the document's compact JSON: its fragments' (with their ids), summed. */
function documentChars(accepted: ReadonlyMap<string, Translation>): number {
  let n = 0;
  for (const t of accepted.values()) {
    for (const f of t.fragments) {
      let chars = fragmentChars.get(f.value);
      if (chars === undefined) fragmentChars.set(f.value, (chars = JSON.stringify(f.value).length));
      n += chars + f.id.length + 4;
    }
  }
  return n;
}

/** Whether the merged Secret data packs into the shards: once per data object (desired.ts keeps it while no value changes). */
const fitting = new WeakMap<object, { limits: SizeLimits; fits: boolean }>();
function fitsOnce(data: Readonly<Record<string, string>>, limits: SizeLimits): boolean {
  const known = fitting.get(data);
  if (known && known.limits === limits) return known.fits;
  const fits = packSecrets(data, limits.secretShardBytes, limits.secretShards) !== undefined;
  fitting.set(data, { limits, fits });
  return fits;
}

/** The `sources` bytes, worked out again only when an entry changed (compared entry by entry). */
let lastSources: { sources: Readonly<Record<string, string>>; bytes: number } | undefined;
function sourcesBytesOnce(sources: Readonly<Record<string, string>>): number {
  if (lastSources && sameEntries(lastSources.sources, sources)) return lastSources.bytes;
  const bytes = Object.entries(sources).reduce((n, [k, v]) => n + Buffer.byteLength(k, 'utf8') + Buffer.byteLength(v, 'utf8') + 8, 0);
  lastSources = { sources, bytes };
  return bytes;
}

/** Accepted CRs to leave out, newest first, so the Secret shards and the index fit. */
export function tooLargeTogether(
  accepted: ReadonlyMap<string, Translation>,
  built: BuiltDocument,
  secretData: Readonly<Record<string, string>>,
  limits: SizeLimits,
): Map<string, Rejection> {
  const out = new Map<string, Rejection>();
  const newestFirst = [...accepted.keys()].reverse();

  if (!fitsOnce(secretData, limits)) {
    const total = secretBytes(secretData);
    const left: Record<string, string> = { ...secretData };
    for (const ref of newestFirst) {
      const own = (accepted.get(ref) as Translation).secrets;
      const keys = Object.keys(own);
      if (!keys.length) continue;
      for (const k of keys) delete left[k];
      out.set(ref, tooLarge(`the rendered Secrets would hold ${formatBytes(total)} of secret values, more than the ${capacity(limits)} hold; this resource's ${formatBytes(secretBytes(own))} (among the newest with secret values) is left out of the rendered configuration`));
      if (packSecrets(left, limits.secretShardBytes, limits.secretShards)) break;
    }
  }

  // The index names every part (name + checksum, ~160 bytes) and, while small enough to sit inline,
  // every CR-made id with its source; past that the sources go in parts of their own (output.ts).
  // Parts end about every CUT_EVERY fragments; the document's compact JSON under-counts the
  // indented parts, hence the factors 2.
  const fragments = Object.keys(built.sources).length;
  const sourcesBytes = sourcesBytesOnce(built.sources);
  const inline = sourcesBytes <= INLINE_SOURCES_BYTES;
  const parts = Math.ceil((2 * fragments) / CUT_EVERY) + Math.ceil((2 * documentChars(accepted)) / MAX_PART_BYTES) + (inline ? 0 : Math.ceil((2 * sourcesBytes) / MAX_PART_BYTES)) + 1;
  const inlineBytes = inline ? Buffer.byteLength(stableStringify({ managed: built.managed, sources: built.sources }), 'utf8') : 0;
  let size = inlineBytes + parts * PART_ENTRY_BYTES + limits.secretShards * 40 + 512;
  if (size > limits.indexBytes) {
    const total = size;
    for (const ref of newestFirst) {
      if (size <= limits.indexBytes) break;
      for (const f of (accepted.get(ref) as Translation).fragments) size -= inline ? indexEntryBytes(f.section, f.id, ref) : (2 * PART_ENTRY_BYTES) / CUT_EVERY;
      if (!out.has(ref)) {
        out.set(ref, tooLarge(`the index (ConfigMap skybridge-config-index) would be ${formatBytes(total)}, over its ${formatBytes(limits.indexBytes)} limit; this resource (among the newest) is left out of the rendered configuration`));
      }
    }
  }
  return out;
}
