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

/**
 * The part texts of the last cut, by position: the segments each was made of and its text(s). A part
 * made of the same segments (the same strings: stable-json.ts keeps an unchanged resource's segment)
 * is the same text, reused without joining, comparing or hashing it again.
 */
export type PartCache = { segments: readonly string[]; texts: readonly string[] }[];

const sameSegments = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((s, i) => s === b[i]);

/** The part texts, in order; joined they are the document. `kept`: the last cut's, updated in place. */
export function cutParts(doc: LaidOutDocument, maxBytes: number = MAX_PART_BYTES, kept?: PartCache): string[] {
  const single = Math.min(SINGLE_PART_BYTES, maxBytes);
  // UTF-8 takes at least a byte per UTF-16 unit: past the limit in units, past it in bytes.
  let units = 0;
  for (const s of doc.segments) units += s.length;
  if (units <= single) {
    const text = doc.segments.join('');
    if (Buffer.byteLength(text, 'utf8') <= single) return [text];
  }
  const groups: string[][] = [];
  let current: string[] = [];
  doc.segments.forEach((segment, i) => {
    current.push(segment);
    if (doc.cutAfter[i]) {
      groups.push(current);
      current = [];
    }
  });
  groups.push(current);
  const out: string[] = [];
  const next: PartCache = [];
  groups.forEach((segments, g) => {
    const known = kept?.[g];
    const texts = known && sameSegments(known.segments, segments) ? known.texts : textsOf(segments.join(''), maxBytes);
    next.push({ segments, texts });
    out.push(...texts);
  });
  if (kept) kept.splice(0, kept.length, ...next);
  return out.length ? out : [''];
}

/** A group's text as parts: none when empty, several when over the byte limit. */
const textsOf = (text: string, maxBytes: number): string[] => (text ? shardText(text, maxBytes) : []);

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
