// OpenAI's API and SDKs take `null` for any optional request field and read it as "not set" (the
// Python SDK sends None as null; many clients write `"temperature": null`). The gateway does the
// same for its OpenAI-shaped routes: a null member is dropped before validation, so it is neither
// refused nor forwarded to a provider that would refuse it. One level down too (`stream_options`,
// `reasoning`, `text`, ...), but never inside lists: a message's `content: null` means something.
// The copy defines fields (setOwn): a `__proto__` member, were one to get this far, stays a plain
// field instead of becoming the prototype whose fields validation and translators would read.
import { setOwn } from './own-fields.ts';

/** Object members whose own members are client data, where a null is a value, not an absence. */
const OPAQUE = new Set(['metadata', 'logit_bias', 'extra_body']);

export function dropNulls(body: unknown): unknown {
  if (!isPlainObject(body) || !holdsNull(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === null) continue;
    setOwn(out, k, isPlainObject(v) && !OPAQUE.has(k) ? withoutNullMembers(v) : v);
  }
  return out;
}

/** Whether dropNulls has anything to drop: most bodies have no null, and are then used as they are (no copy). */
function holdsNull(body: Record<string, unknown>): boolean {
  for (const k in body) {
    if (!Object.hasOwn(body, k)) continue;
    const v = body[k];
    if (v === null) return true;
    if (isPlainObject(v) && !OPAQUE.has(k)) {
      for (const m in v) if (Object.hasOwn(v, m) && v[m] === null) return true;
    }
  }
  return false;
}

function withoutNullMembers(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (v !== null) continue;
    out ??= { ...obj };
    delete out[k];
  }
  return out ?? obj;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A body parser that first reads nulls as absent. */
export function nullsAbsent<T>(parse: (body: unknown) => T): (body: unknown) => T {
  return (body) => parse(dropNulls(body));
}
