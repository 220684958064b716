// Cutting the laid-out document into part ConfigMaps so that an edit to one resource changes one
// part: parts end after fragments whose identity (not content) marks a boundary, so an edit never
// moves a boundary, and adding or deleting a resource moves one only when that resource marks one
// (one in CUT_EVERY). The parts are still slices of the one document text: the proxies join them
// as before (the contract is unchanged). A part over the byte limit is sliced as before.
import { Buffer } from 'node:buffer';
import { MAX_PART_BYTES, shardText } from './shard.ts';
import type { LaidOutDocument } from './stable-json.ts';

/** Up to this size the document is one part, as it always was: most installations. */
export const SINGLE_PART_BYTES = 64 * 1024;
/** About one fragment in this many ends a part: ~10-20 KiB parts for resources of a few hundred bytes. */
export const CUT_EVERY = 32;

/** FNV-1a, 32 bits: spreads ids evenly and is stable across processes and versions. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Whether a part may end after the fragment `id` of the section at `parentPath`. */
export const isCutId = (parentPath: string, id: string): boolean => fnv1a(`${parentPath}/${id}`) % CUT_EVERY === 0;

/** `sources` entries are ~50-300 bytes: about one in this many ends a sources part (~30-60 KiB parts). */
export const SOURCES_CUT_EVERY = 256;

/** The part texts, in order; joined they are the document. */
export function cutParts(doc: LaidOutDocument, maxBytes: number = MAX_PART_BYTES, joined?: string): string[] {
  // The caller usually has the joined text already (the revision is its hash): not joined again.
  const text = joined ?? doc.segments.join('');
  if (Buffer.byteLength(text, 'utf8') <= Math.min(SINGLE_PART_BYTES, maxBytes)) return [text];
  const out: string[] = [];
  let current = '';
  const flush = () => {
    if (current) out.push(...shardText(current, maxBytes));
    current = '';
  };
  doc.segments.forEach((segment, i) => {
    current += segment;
    if (doc.cutAfter[i]) flush();
  });
  flush();
  return out.length ? out : [''];
}

/**
 * `sources` (`<section>/<id>` -> `<Kind> <namespace>/<name>`) laid out as stableStringify lays it
 * out, one entry per segment, cut after the entries whose key marks a boundary.
 */
export function layoutSources(sources: Readonly<Record<string, string>>): LaidOutDocument {
  const keys = Object.keys(sources).sort();
  if (!keys.length) return { segments: ['{}\n'], cutAfter: [false] };
  const segments: string[] = [];
  const cutAfter: boolean[] = [];
  keys.forEach((k, i) => {
    segments.push(`${i === 0 ? '{\n' : ''}  ${JSON.stringify(k)}: ${JSON.stringify(sources[k])}${i < keys.length - 1 ? ',\n' : '\n}\n'}`);
    cutAfter.push(fnv1a(`sources/${k}`) % SOURCES_CUT_EVERY === 0);
  });
  return { segments, cutAfter };
}
