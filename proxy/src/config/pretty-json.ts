// JSON.stringify(value, null, 2) (or JSON.stringify(value)) in steps: the config store's file of a
// large configuration is megabytes of text, and neither a write from a reload nor the snapshot's
// digest should hold the event loop for the whole of it. The first levels are written out here, a
// slice of array items per step; deeper values are stringified whole and indented to their place.
// The pieces, joined, are JSON.stringify's text byte for byte.

/** Array items written per step. */
const ITEMS_PER_STEP = 250;
/** Objects and arrays down to this depth are laid out here (the store's document.governance.virtual_keys is at 3); deeper values are stringified whole. */
const LAID_OUT_DEPTH = 4;

export interface JsonLayout {
  /** `'  '` for JSON.stringify(value, null, 2), `''` for JSON.stringify(value). */
  indent: string;
  /** Objects and arrays above this depth are written out member by member; deeper ones whole. */
  depth: number;
}

/**
 * JSON.stringify's text of `value` handed to `out` in pieces, in order, yielding after every
 * ITEMS_PER_STEP array items; false (nothing written) for a value it leaves out (undefined).
 */
export function* writeJsonSteps(value: unknown, layout: JsonLayout, out: (piece: string) => void): Generator<void, boolean> {
  const counter = { items: 0 };
  const colon = layout.indent ? ': ' : ':';
  // A value stringified whole, indented to its place. Strings hold no raw line breaks (JSON escapes
  // them), so indenting every line is exact.
  const whole = (v: unknown, pad: string): string | undefined =>
    layout.indent ? JSON.stringify(v, null, layout.indent)?.replaceAll('\n', `\n${pad}`) : JSON.stringify(v);
  function* write(v: unknown, pad: string, depth: number): Generator<void, boolean> {
    if (!laidOut(v, depth, layout.depth)) {
      const text = whole(v, pad);
      if (text === undefined) return false;
      out(text);
      return true;
    }
    const inner = pad + layout.indent;
    const first = layout.indent ? `\n${inner}` : '';
    const next = `,${first}`;
    let any = false;
    if (Array.isArray(v)) {
      out('[');
      for (const item of v) {
        out(any ? next : first);
        any = true;
        if (!(yield* write(item, inner, depth + 1))) out('null');
        if (++counter.items % ITEMS_PER_STEP === 0) yield;
      }
      out(any && layout.indent ? `\n${pad}]` : ']');
      return true;
    }
    out('{');
    for (const key of Object.keys(v)) {
      const member = (v as Record<string, unknown>)[key];
      if (laidOut(member, depth + 1, layout.depth)) {
        out(`${any ? next : first}${JSON.stringify(key)}${colon}`);
        yield* write(member, inner, depth + 1);
      } else {
        // Members JSON.stringify leaves out (undefined, functions) are left out here too.
        const text = whole(member, inner);
        if (text === undefined) continue;
        out(`${any ? next : first}${JSON.stringify(key)}${colon}${text}`);
      }
      any = true;
    }
    out(any && layout.indent ? `\n${pad}}` : '}');
    return true;
  }
  return yield* write(value, '', 0);
}

/**
 * JSON.stringify(value, null, 2), made in steps, as chunks of about `chunkChars` characters (what a
 * file write takes a piece at a time): never one string of the whole text.
 */
export function* prettyJsonChunkSteps(value: unknown, chunkChars = 1 << 16): Generator<void, string[]> {
  const chunks: string[] = [];
  const batch = batched(chunkChars, (chunk) => chunks.push(chunk));
  if (!(yield* writeJsonSteps(value, { indent: '  ', depth: LAID_OUT_DEPTH }, batch.out))) return [];
  batch.flush();
  return chunks;
}

/** Pieces joined into chunks of about `chunkChars` characters (one call per piece costs more downstream). */
export function batched(chunkChars: number, emit: (chunk: string) => void): { out: (piece: string) => void; flush: () => void } {
  let pending: string[] = [];
  let size = 0;
  const flush = () => {
    if (pending.length) emit(pending.join(''));
    pending = [];
    size = 0;
  };
  const out = (piece: string) => {
    pending.push(piece);
    size += piece.length;
    if (size >= chunkChars) flush();
  };
  return { out, flush };
}

/** Written out member by member (a plain object or array above `limit`), else stringified whole. */
function laidOut(v: unknown, depth: number, limit: number): v is object {
  return depth < limit && v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}
