// Where two configuration documents differ, as paths (`providers.openai`, `governance.virtual_keys[vk-1]`):
// what a reload changed, for its audit record. Paths only, never values: a value may be a secret.
const DEPTH = 3;

/** An array of objects with an `id` or `name` is compared by that, so a reorder is not every entry. */
function keyed(list: readonly unknown[]): Map<string, unknown> | undefined {
  const out = new Map<string, unknown>();
  for (const item of list) {
    const o = item as { id?: unknown; name?: unknown } | null;
    const k = o && typeof o === 'object' ? (typeof o.id === 'string' ? o.id : typeof o.name === 'string' ? o.name : undefined) : undefined;
    if (k === undefined || out.has(k)) return undefined;
    out.set(k, item);
  }
  return out;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function changedPaths(before: unknown, after: unknown, path = '', depth = 0): string[] {
  if (before === after) return [];
  const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  // Objects and keyed lists are compared member by member, and only the members at the depth limit
  // (or of another kind) by their text: a reload of thousands of resources is read once, not once per level.
  if (depth < DEPTH && isObj(before) && isObj(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => changedPaths(before[k], after[k], path ? `${path}.${k}` : k, depth + 1));
  }
  if (depth < DEPTH && Array.isArray(before) && Array.isArray(after)) {
    const a = keyed(before);
    const b = keyed(after);
    if (a && b) {
      const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
      return keys.flatMap((k) => changedPaths(a.get(k), b.get(k), `${path}[${k}]`, depth + 1));
    }
  }
  return same(before, after) ? [] : [path || '(root)'];
}
