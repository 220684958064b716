// Canonical JSON of a request, so the direct cache hash depends only on what was asked: object keys
// sorted, no whitespace, numbers in one form (1.0, 1 and 1e0 are the same number once parsed and
// print the same), undefined members left out as JSON leaves them out. Bytes (an uploaded file)
// are written as their SHA-256, so a large upload is hashed once and never copied into the key.
import { createHash, hash } from 'node:crypto';

/**
 * How a request's top level is seen by `canonicalJson(value, view)`: without the `skip` members and
 * with `stream` set, written exactly as the copy with those members deleted and set would be, but
 * without making that copy (a copy with deleted members is slow to walk, and a lookup made two).
 */
export interface TopView {
  readonly skip: ReadonlySet<string>;
  readonly stream: boolean;
}

export function canonicalJson(value: unknown, view?: TopView): string {
  let out = '';
  const write = (v: unknown): void => {
    if (v === null || v === undefined) {
      out += 'null';
      return;
    }
    switch (typeof v) {
      case 'number':
        // -0 and 0 are one number to a client; NaN/Infinity cannot come from JSON.
        out += Number.isFinite(v) ? JSON.stringify(v === 0 ? 0 : v) : 'null';
        return;
      case 'string':
        out += JSON.stringify(v);
        return;
      case 'boolean':
        out += v ? 'true' : 'false';
        return;
      case 'bigint':
        out += v.toString();
        return;
      case 'object':
        break;
      default:
        out += 'null';
        return;
    }
    if (v instanceof Uint8Array) {
      out += JSON.stringify(`sha256:${createHash('sha256').update(v).digest('hex')}`);
      return;
    }
    if (Array.isArray(v)) {
      out += '[';
      for (let i = 0; i < v.length; i++) {
        if (i) out += ',';
        write(v[i] === undefined ? null : v[i]);
      }
      out += ']';
      return;
    }
    writeObject(v as Record<string, unknown>, undefined);
  };
  const writeObject = (obj: Record<string, unknown>, top: TopView | undefined): void => {
    // The members written, kept and sorted in place: no filtered copy per object.
    const keys = Object.keys(obj);
    let n = 0;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      const v = obj[k];
      if (v === undefined || typeof v === 'function' || (top && (k === 'stream' || top.skip.has(k)))) continue;
      keys[n++] = k;
    }
    if (top) keys[n++] = 'stream';
    keys.length = n;
    sortKeys(keys);
    out += '{';
    for (let i = 0; i < n; i++) {
      const k = keys[i];
      if (i) out += ',';
      out += JSON.stringify(k) + ':';
      if (top && k === 'stream') out += top.stream ? 'true' : 'false';
      else write(obj[k]);
    }
    out += '}';
  };
  if (view) writeObject(value as Record<string, unknown>, view);
  else write(value);
  return out;
}

/**
 * sort()'s order (code units) without its work array for the few members a request's objects have;
 * sort() itself for larger ones (insertion is quadratic).
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i];
    let j = i;
    while (j > 0 && keys[j - 1] > k) {
      keys[j] = keys[j - 1];
      j--;
    }
    keys[j] = k;
  }
}

/** One-shot crypto.hash: no Hash object per call (two per cache lookup). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Hex SHA-256 of the canonical JSON. */
export function canonicalHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
