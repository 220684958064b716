// Canonical JSON of a request, so the direct cache hash depends only on what was asked: object keys
// sorted, no whitespace, numbers in one form (1.0, 1 and 1e0 are the same number once parsed and
// print the same), undefined members left out as JSON leaves them out. Bytes (an uploaded file)
// are written as their SHA-256, so a large upload is hashed once and never copied into the key.
import { createHash, hash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
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
      v.forEach((item, i) => {
        if (i) out += ',';
        write(item === undefined ? null : item);
      });
      out += ']';
      return;
    }
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined && typeof obj[k] !== 'function').sort();
    out += '{';
    keys.forEach((k, i) => {
      if (i) out += ',';
      out += JSON.stringify(k) + ':';
      write(obj[k]);
    });
    out += '}';
  };
  write(value);
  return out;
}

/** One-shot crypto.hash: no Hash object per call (two per cache lookup). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Hex SHA-256 of the canonical JSON. */
export function canonicalHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
