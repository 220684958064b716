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

/** The document's text in segments, each resource's fragment ending one (render/parts.ts cuts parts there). */
export interface LaidOutDocument {
  /** Joined, exactly stableStringify(value). */
  segments: string[];
  /** Whether the segment ends with a fragment whose identity marks a part boundary. */
  cutAfter: boolean[];
}

/**
 * stableStringify, byte for byte, reusing the text of objects rendered before: every object whose
 * parent sits at a path `reusable` accepts (the document's per-resource fragments) is laid out once
 * and kept in `cache` by identity, then indented into place. So a change to one resource lays out
 * that resource, not the whole document. The objects must not change once laid out: fragments are
 * never mutated (a changed resource is a new translation, so a new object). `isCut(parentPath, id)`
 * says, from a fragment's identity (its key, or its id, name or client_id in a list), whether a part
 * may end after it: identity, not content, so an edit never moves a boundary.
 */
export function layoutReusing(
  value: unknown,
  reusable: (parentPath: string) => boolean,
  cache: WeakMap<object, string>,
  isCut: (parentPath: string, id: string) => boolean = () => false,
): LaidOutDocument {
  const segments: string[] = [];
  const cutAfter: boolean[] = [];
  let buf = '';
  const emit = (v: unknown, path: string, indent: string): void => {
    if (v === null || typeof v !== 'object') {
      buf += JSON.stringify(v) ?? 'null';
      return;
    }
    const inner = `${indent}  `;
    const reuse = reusable(path);
    const child = (c: unknown, childPath: string, id: string): void => {
      if (reuse && c !== null && typeof c === 'object') {
        let text = cache.get(c);
        if (text === undefined) {
          text = JSON.stringify(sortKeys(c), null, 2);
          cache.set(c, text);
        }
        segments.push(segmentOnce(c, buf, inner ? indentedOnce(c, text, inner) : text));
        cutAfter.push(isCut(path, id));
        buf = '';
        return;
      }
      emit(c, childPath, inner);
    };
    if (Array.isArray(v)) {
      if (!v.length) {
        buf += '[]';
        return;
      }
      buf += '[\n';
      v.forEach((c, i) => {
        buf += inner;
        const item = c === undefined ? null : (c as unknown);
        const o = item !== null && typeof item === 'object' ? (item as Record<string, unknown>) : undefined;
        child(item, path, String(o?.id ?? o?.client_id ?? o?.name ?? i));
        buf += i < v.length - 1 ? ',\n' : '\n';
      });
      buf += `${indent}]`;
      return;
    }
    const record = v as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    if (!keys.length) {
      buf += '{}';
      return;
    }
    buf += '{\n';
    keys.forEach((k, i) => {
      buf += `${inner}${JSON.stringify(k)}: `;
      child(record[k], path ? `${path}.${k}` : k, k);
      buf += i < keys.length - 1 ? ',\n' : '\n';
    });
    buf += `${indent}}`;
  };
  emit(value, '', '');
  segments.push(`${buf}\n`);
  cutAfter.push(false);
  return { segments, cutAfter };
}

/**
 * A fragment's segment (the layout since the last segment, then the fragment), kept by identity while
 * both are the same: an unchanged resource gives the very same string each render, so the part it
 * sits in is recognised without comparing or hashing its text again (render/parts.ts).
 */
const segmentsOf = new WeakMap<object, { prefix: string; body: string; segment: string }>();
function segmentOnce(fragment: object, prefix: string, body: string): string {
  const known = segmentsOf.get(fragment);
  if (known && known.body === body && known.prefix === prefix) return known.segment;
  const segment = prefix + body;
  segmentsOf.set(fragment, { prefix, body, segment });
  return segment;
}

/** A fragment's text indented into place, kept by identity: a fragment always sits at the same depth. */
const indented = new WeakMap<object, { source: string; inner: string; text: string }>();
function indentedOnce(fragment: object, text: string, inner: string): string {
  const known = indented.get(fragment);
  if (known && known.source === text && known.inner === inner) return known.text;
  const out = text.replaceAll('\n', `\n${inner}`);
  indented.set(fragment, { source: text, inner, text: out });
  return out;
}

/** layoutReusing, joined: stableStringify's bytes. */
export function stableStringifyReusing(value: unknown, reusable: (parentPath: string) => boolean, cache: WeakMap<object, string>): string {
  return layoutReusing(value, reusable, cache).segments.join('');
}
