// The headers every request with one provider and one key starts from: the operator's extra
// headers, then the adapter's auth headers for the key. A function of those alone, so made once
// per key (per provider when keyless) and copied per request, not rebuilt (`Bearer ${key}` and two
// objects per request). Kept beside the object it was made for and checked against what it was made
// from: a reloaded config compiles new key objects, and a key whose value, adapter or provider's
// extra headers differ from the entry's gets its headers made again, so no request can carry
// another key's (or an older value's) secret.
import type { FormatAdapter } from '../providers/adapter.ts';
import type { ProviderKey, ProviderRuntime } from '../providers/runtime.ts';

interface BaseHeaders {
  readonly extra: Readonly<Record<string, string>>;
  readonly adapter: FormatAdapter;
  readonly value: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

// Weak: a key or provider dropped by a reload takes its entry with it.
const made = new WeakMap<ProviderKey | ProviderRuntime, BaseHeaders>();

/** A new object with the provider's extra headers and `adapter`'s auth headers for `key` (the caller adds to it). */
export function baseHeaders(provider: ProviderRuntime, adapter: FormatAdapter, key: ProviderKey | undefined): Record<string, string> {
  const owner = key ?? provider;
  const value = key?.value;
  let entry = made.get(owner);
  if (entry === undefined || entry.value !== value || entry.adapter !== adapter || entry.extra !== provider.extraHeaders) {
    entry = { extra: provider.extraHeaders, adapter, value, headers: { ...provider.extraHeaders, ...adapter.authHeaders(value) } };
    made.set(owner, entry);
  }
  return { ...entry.headers };
}
