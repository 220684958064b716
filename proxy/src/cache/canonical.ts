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
  return view ? topObject(value as Record<string, unknown>, view) : write(value);
}

/**
 * canonicalJson(value, a) and canonicalJson(value, b), the same bytes each, in one walk: the top
 * level's members are sorted once and each member's value is written once, for both texts (a
 * request's identity needs its parameters without the input and the whole request).
 */
export function canonicalPair(value: Record<string, unknown>, a: TopView, b: TopView): [string, string] {
  const keys = topKeys(value, a, b);
  let outA = '{';
  let outB = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (k === 'stream') {
      // Set by each view, whatever it skips (as canonicalJson's view writes it).
      outA += `${outA.length > 1 ? ',' : ''}"stream":${a.stream}`;
      outB += `${outB.length > 1 ? ',' : ''}"stream":${b.stream}`;
      continue;
    }
    const inA = !a.skip.has(k);
    const member = `${JSON.stringify(k)}:${write(value[k])}`;
    if (inA) outA += outA.length > 1 ? `,${member}` : member;
    if (!b.skip.has(k)) outB += outB.length > 1 ? `,${member}` : member;
  }
  return [`${outA}}`, `${outB}}`];
}

/*
 * Module functions that return their text, not closures made per call: a lookup's key is written
 * on every request the cache sees.
 */
function write(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'number':
      // ToString of a finite number, as JSON.stringify writes it (-0 prints 0); NaN/Infinity cannot come from JSON.
      return Number.isFinite(v) ? String(v) : 'null';
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object':
      break;
    default:
      return 'null';
  }
  if (v instanceof Uint8Array) return JSON.stringify(`sha256:${createHash('sha256').update(v).digest('hex')}`);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i) out += ',';
      out += write(v[i]);
    }
    return `${out}]`;
  }
  return object(v as Record<string, unknown>);
}

function object(obj: Record<string, unknown>): string {
  // The members written, kept and sorted in place: no filtered copy per object.
  const keys = Object.keys(obj);
  let n = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const v = obj[k];
    if (v === undefined || typeof v === 'function') continue;
    keys[n++] = k;
  }
  keys.length = n;
  sortKeys(keys);
  let out = '{';
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    if (i) out += ',';
    out += `${JSON.stringify(k)}:${write(obj[k])}`;
  }
  return `${out}}`;
}

/** The top level's members as the views see them, sorted: without `stream` as sent (the views set it) and without what every view skips. */
function topKeys(obj: Record<string, unknown>, a: TopView, b?: TopView): string[] {
  const keys = Object.keys(obj);
  let n = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const v = obj[k];
    if (v === undefined || typeof v === 'function' || k === 'stream' || (a.skip.has(k) && (!b || b.skip.has(k)))) continue;
    keys[n++] = k;
  }
  keys[n++] = 'stream';
  keys.length = n;
  sortKeys(keys);
  return keys;
}

function topObject(obj: Record<string, unknown>, view: TopView): string {
  const keys = topKeys(obj, view);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (i) out += ',';
    out += `${JSON.stringify(k)}:${k === 'stream' ? String(view.stream) : write(obj[k])}`;
  }
  return `${out}}`;
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
