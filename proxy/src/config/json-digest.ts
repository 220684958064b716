// SHA-256 of JSON.stringify(value) in steps: the snapshot's hash of a large configuration (10,000
// virtual keys) is megabytes of text, and a reload should not hold the event loop for the whole of
// it. The first levels are written out here, a slice of array items per step; deeper values are
// stringified whole. The bytes hashed are JSON.stringify's, so the digest is the same.
import { createHash } from 'node:crypto';

/** Array items written per step. */
const ITEMS_PER_STEP = 250;
/** Objects and arrays down to this depth are written out here (governance.virtual_keys[i] is at 3). */
const LAID_OUT_DEPTH = 3;

/** The hex SHA-256 of JSON.stringify(value), for an object or array. */
export function* jsonDigestSteps(value: unknown): Generator<void, string> {
  const hash = createHash('sha256');
  const pending: string[] = [];
  const out = (s: string) => void pending.push(s);
  const flush = () => {
    if (pending.length) hash.update(pending.join(''));
    pending.length = 0;
  };
  const counter = { items: 0 };
  function* write(v: unknown, depth: number): Generator<void, boolean> {
    if (!laidOut(v, depth)) {
      const text = JSON.stringify(v);
      if (text === undefined) return false;
      out(text);
      return true;
    }
    if (Array.isArray(v)) {
      out('[');
      for (let i = 0; i < v.length; i++) {
        if (i) out(',');
        if (!(yield* write(v[i], depth + 1))) out('null');
        if (++counter.items % ITEMS_PER_STEP === 0) {
          flush();
          yield;
        }
      }
      out(']');
      return true;
    }
    out('{');
    let first = true;
    for (const key of Object.keys(v as object)) {
      const member = (v as Record<string, unknown>)[key];
      const sep = first ? '' : ',';
      if (laidOut(member, depth + 1)) {
        out(`${sep}${JSON.stringify(key)}:`);
        yield* write(member, depth + 1);
      } else {
        // Members JSON.stringify leaves out (undefined, functions) are left out here too.
        const text = JSON.stringify(member);
        if (text === undefined) continue;
        out(`${sep}${JSON.stringify(key)}:${text}`);
      }
      first = false;
    }
    out('}');
    return true;
  }
  yield* write(value, 0);
  flush();
  return hash.digest('hex');
}

/** Written out member by member here (a plain object or array near the top), else stringified whole. */
function laidOut(v: unknown, depth: number): v is object {
  return depth < LAID_OUT_DEPTH && v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}
