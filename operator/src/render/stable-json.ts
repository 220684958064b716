// Deterministic JSON: object keys sorted (by UTF-16 code unit, like Array.prototype.sort), 2-space
// indent, a trailing newline. The same value always gives the same bytes, so GitOps tools and the
// proxies' checksums see no churn when nothing changed.

/** A copy of `value` with every object's keys in sorted order; undefined members dropped. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** Sorted keys, 2-space indent, newline at the end. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2) + '\n';
}

/** Sorted keys, no whitespace: for hashing values whose layout nobody reads. */
export function compactStableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}
