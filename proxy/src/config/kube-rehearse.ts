// The first reloads after start cost several times what later ones do: the start-up document is
// checked and compiled without the reload memos (so the first edit checks and compiles every
// resource again), and the memos' hit paths, which an edit takes, are not compiled by the runtime
// yet. Rehearsing a few reloads once the first document is served (the rendering as it is, then
// copies with one resource's text changed, as an edit changes one part and the index) fills those
// memos and warms those paths before a real edit waits on them. Pure: the edited copies are
// lookups over what the informers hold; the caller throws their results away.
import { INDEX_CONFIGMAP, INDEX_KEY, PART_KEY, sha256Hex } from '../schema/config-index.ts';
import type { DataLookup } from './kube-document.ts';

/** An unescaped `"description":"` is a key and the start of its string value (quotes inside strings are escaped). */
const FIELD = /"description":\s*"/;

/**
 * Up to `count` renderings, each `configMap` with one part's first description changed (and the
 * index's checksum and revision to match), from parts spread over the document (its sections come
 * in order: providers, then the governance lists). None when the index or a part cannot be read:
 * that rendering is not served either.
 */
export function rehearsalEdits(configMap: DataLookup, count = 4): DataLookup[] {
  const indexText = configMap(INDEX_CONFIGMAP)?.[INDEX_KEY];
  if (indexText === undefined) return [];
  let index: { revision?: unknown; parts?: unknown; checksums?: Record<string, string> };
  try {
    index = JSON.parse(indexText) as typeof index;
  } catch {
    return [];
  }
  const parts = Array.isArray(index.parts) ? (index.parts as unknown[]).filter((p): p is string => typeof p === 'string') : [];
  const texts = parts.map((name) => configMap(name)?.[PART_KEY]);
  if (!parts.length || texts.some((t) => t === undefined)) return [];
  const picked = new Set<number>();
  for (let k = 0; k < count; k++) picked.add(Math.min(parts.length - 1, Math.floor((k * parts.length) / count)));
  const edits: DataLookup[] = [];
  for (const i of picked) {
    const text = texts[i] as string;
    const found = FIELD.exec(text);
    if (!found) continue;
    const cut = found.index + found[0].length;
    const edited = `${text.slice(0, cut)}.${text.slice(cut)}`;
    const name = parts[i];
    const whole = texts.map((t, j) => (j === i ? edited : (t as string))).join('');
    const editedIndex = JSON.stringify({ ...index, revision: sha256Hex(whole), checksums: { ...index.checksums, [name]: sha256Hex(edited) } });
    edits.push((n) => (n === INDEX_CONFIGMAP ? { [INDEX_KEY]: editedIndex } : n === name ? { [PART_KEY]: edited } : configMap(n)));
  }
  return edits;
}
