// Secrets in management API answers: shown masked (`sk-...abcd`), never in full. An `env.VAR`
// reference names a variable, not a secret, and is shown as it is. A masked value sent back
// unchanged in a write means "keep what is stored". Credentials inside URLs (`https://user:pass@`)
// are masked wherever a URL appears.
import { maskUrlCredentials } from '../upstream/egress.ts';
import { isReference } from '../schema/env-ref.ts';
import { MAX_JSON_DEPTH } from '../schema/names.ts';

export const REDACTED = '<redacted>';

/** Below this length the last four characters would give away too much of the secret. */
const MIN_PARTIAL = 16;

export function maskSecret(value: string): string {
  if (isReference(value)) return value;
  if (value.length >= MIN_PARTIAL) return `${value.slice(0, 3)}...${value.slice(-4)}`;
  return REDACTED;
}

/** Passwords and credential blobs: nothing of them is shown. */
export function redact(value: string): string {
  return isReference(value) ? value : REDACTED;
}

/** Field names whose string values are secrets, wherever they appear. */
const SECRET_FIELD = /^(value|secret|token|api_?key|api_keys|apikey|authorization|private_key)$|(secret_key|access_key|hmac_key|_token|_secret|_api_key)$/i;
/** Field names whose values are shown as REDACTED, nothing kept. */
const OPAQUE_FIELD = /password|credentials/i;
/** Header names (in `extra_headers`) that carry credentials. */
const SECRET_HEADER = /auth|key|token|secret|cookie|session|password/i;

/**
 * A copy of `value` with every secret-named field masked, recursively. `skip(path)` leaves a
 * subtree as it is (routing rule query trees have `value` fields that are not secrets).
 */
export function maskTree(value: unknown, skip: (path: string) => boolean = () => false, path = '', depth = 0): unknown {
  // A refused body is still audited, however deep it was: below the depth any accepted body may
  // have, nothing is copied (recursing on would overflow the stack).
  if (depth > MAX_JSON_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((v, i) => maskTree(v, skip, `${path}[${i}]`, depth + 1));
  if (typeof value === 'string') return maskUrlCredentials(value);
  if (!value || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([k, v]): [string, unknown] => {
    const at = path ? `${path}.${k}` : k;
    if (skip(at)) return [k, v];
    if (OPAQUE_FIELD.test(k)) return [k, hideAll(v, redact, depth + 1)];
    if (SECRET_FIELD.test(k)) return [k, hideAll(v, maskSecret, depth + 1)];
    if (k === 'extra_headers' && v && typeof v === 'object' && !Array.isArray(v)) return [k, maskHeaders(v as Record<string, unknown>)];
    // A webhook's headers are the receiver's credentials whatever they are called: every value is
    // hidden, as /api/webhooks shows them (a sealed `enc:v1:` value included).
    if (k === 'headers' && /(^|\.)webhooks\[\d+\]$/.test(path)) return [k, hideAll(v, redact, depth + 1)];
    return [k, maskTree(v, skip, at, depth + 1)];
  });
  // fromEntries defines fields: a `__proto__` key could never become the copy's prototype.
  return Object.fromEntries(entries);
}

export function maskHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).map(([name, v]) => [name, SECRET_HEADER.test(name) && typeof v === 'string' ? maskSecret(v) : v]));
}

/** Every string leaf of a secret field (a list of keys, a credentials object) is hidden. */
function hideAll(value: unknown, hide: (s: string) => string, depth: number): unknown {
  if (depth > MAX_JSON_DEPTH) return TOO_DEEP;
  if (typeof value === 'string') return hide(value);
  if (Array.isArray(value)) return value.map((v) => hideAll(v, hide, depth + 1));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hideAll(v, hide, depth + 1)]));
  return value;
}

/** What stands for a subtree nested deeper than any accepted body (a refused one, audited). */
const TOO_DEEP = '[nested too deep]';

/** True when `sent` is what an answer showed for `stored` (so the caller did not change it). */
export function isMaskOf(sent: string, stored: string): boolean {
  return sent !== stored && (sent === maskSecret(stored) || sent === REDACTED || sent === maskUrlCredentials(stored));
}

/**
 * `sent` with every string that is the masked form of the stored value at the same place replaced
 * by the stored value: a client that read a record and writes it back keeps its secrets.
 */
export function unmask(sent: unknown, stored: unknown): unknown {
  if (typeof sent === 'string') return typeof stored === 'string' && isMaskOf(sent, stored) ? stored : sent;
  if (Array.isArray(sent)) return sent.map((v, i) => unmask(v, Array.isArray(stored) ? stored[i] : undefined));
  if (sent && typeof sent === 'object') {
    const base = stored && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {};
    return Object.fromEntries(Object.entries(sent).map(([k, v]) => [k, unmask(v, base[k])]));
  }
  return sent;
}
