// A parsed document handed from the reload's reader thread (read-worker.ts) to the event loop as
// several JSON texts: its outline with each long list emptied, and each long list's items in
// slices. The loop parses one slice per step (config/steps.ts), so no single JSON.parse takes the
// whole of a 10,000-key file (tens of milliseconds); receiving the parsed object instead (structured
// clone) costs more than parsing the text. Pure: both sides import it.

/** List items per slice: one slice's JSON.parse is well under a millisecond. */
const ITEMS_PER_SLICE = 250;
/** Lists are looked for this deep in objects (`governance.virtual_keys` is at 2). */
const LIST_DEPTH = 3;

export interface DocumentSlices {
  /** The document with each sliced list emptied (`[]` in its place, key order kept). */
  outline: string;
  /** Each sliced list: its path of object keys, and its items as JSON arrays of up to ITEMS_PER_SLICE. */
  lists: { path: string[]; slices: string[] }[];
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `doc` (parsed from `text`) as slices; JSON.parse of them (documentFromSlices) gives a value equal
 * to `doc`. A document holding a negative zero is handed over as its text, whole: JSON.stringify
 * would write it as 0.
 */
export function sliceDocument(doc: unknown, text: string): DocumentSlices {
  if (hasNegativeZero(doc)) return { outline: text, lists: [] };
  const lists: DocumentSlices['lists'] = [];
  const outline = (v: unknown, path: string[]): unknown => {
    if (!isPlain(v) || path.length >= LIST_DEPTH) return v;
    const out: Plain = {};
    for (const key of Object.keys(v)) {
      const member = v[key];
      // Never a path through `__proto__` (assigning to it on the other side would set a prototype).
      if (key === '__proto__') {
        Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
        continue;
      }
      if (Array.isArray(member) && member.length > ITEMS_PER_SLICE) {
        const slices: string[] = [];
        for (let i = 0; i < member.length; i += ITEMS_PER_SLICE) slices.push(JSON.stringify(member.slice(i, i + ITEMS_PER_SLICE)));
        lists.push({ path: [...path, key], slices });
        out[key] = [];
      } else out[key] = outline(member, [...path, key]);
    }
    return out;
  };
  return { outline: JSON.stringify(outline(doc, [])), lists };
}

/** The document back from its slices, one JSON.parse per step. */
export function* documentFromSlices(parts: DocumentSlices): Generator<void, unknown> {
  const doc = JSON.parse(parts.outline) as unknown;
  for (const { path, slices } of parts.lists) {
    let node: unknown = doc;
    for (const key of path) node = isPlain(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    if (!Array.isArray(node)) throw new Error(`the config reader thread's slices do not fit the outline at ${path.join('.')}`);
    for (const slice of slices) {
      yield;
      for (const item of JSON.parse(slice) as unknown[]) node.push(item);
    }
  }
  return doc;
}

function hasNegativeZero(v: unknown): boolean {
  if (typeof v === 'number') return Object.is(v, -0);
  if (v === null || typeof v !== 'object') return false;
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (hasNegativeZero(x)) return true;
  return false;
}
