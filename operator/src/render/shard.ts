// Splitting the rendered document into ConfigMap-sized parts. A Kubernetes object is capped at
// about 1 MiB; parts stay under MAX_PART_BYTES of UTF-8 so names, labels and managedFields fit too.
import { Buffer } from 'node:buffer';

export const MAX_PART_BYTES = 900 * 1024;

/**
 * Slices of `text`, in order, each at most `maxBytes` of UTF-8, cut only between code points.
 * Joining them gives back `text`. An empty text is one empty part (the index always names a part).
 */
export function shardText(text: string, maxBytes: number = MAX_PART_BYTES): string[] {
  if (maxBytes < 4) throw new RangeError('maxBytes must be at least 4 (one UTF-8 code point)');
  // Most documents are one part, and most of the rest ASCII: both are cut without walking the
  // text code point by code point (a megabyte is a million steps of JavaScript).
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return [text];
  if (isAscii(text)) {
    const parts: string[] = [];
    for (let i = 0; i < text.length; i += maxBytes) parts.push(text.slice(i, i + maxBytes));
    return parts;
  }
  const parts: string[] = [];
  let start = 0;
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i) as number;
    const units = cp > 0xffff ? 2 : 1;
    const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) {
      parts.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
    i += units;
  }
  parts.push(text.slice(start));
  return parts;
}

const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;
