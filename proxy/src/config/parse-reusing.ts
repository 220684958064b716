// JSON.parse of a rendered document that hands back, for each resource's object whose text is the
// same as in the last document, the very object parsed then. The operator lays the document out as
// JSON.stringify(value, null, 2) does (one resource's fragment per object at a fixed depth), so an
// edit to one resource changes one object's text: the proxy then parses that one, and what keeps
// memos by identity downstream (the check's keys, the compile, the reference walk) finds the rest.
//
// Never a different answer than JSON.parse(text): each object's text must parse whole on its own
// (so it is exactly the value that starts there), the rest is parsed with a unique placeholder in
// its place, and every placeholder must come back exactly once. Anything else (another layout, a
// key `__proto__`, invalid JSON) is JSON.parse of the whole text, errors and all.
import { randomBytes } from 'node:crypto';

/**
 * An object opening at the end of a line at 4 or 6 spaces (a provider under `providers`, a virtual
 * key in `governance.virtual_keys`, a webhook...): `"key": {` or `{` alone. The key is a whole JSON
 * string token, so the brace is never inside a string.
 */
const OPENER = /^( {4}| {6})(?:"(?:[^"\\]|\\.)*": )?\{$/;

export class ParseMemo {
  /** Each reused object's text -> the object, from the last document parsed. */
  #objects = new Map<string, unknown>();
  readonly #placeholder = `\u0000skybridge-object-${randomBytes(12).toString('hex')}-`;
  /** The placeholder as JSON text, without its closing quote (the object's number and `"` follow). */
  readonly #quoted = JSON.stringify(this.#placeholder).slice(0, -1);
  /** Objects parsed, and reused, so far (what the tests and the micro benchmark read). */
  readonly stats = { parsed: 0, reused: 0, wholeParses: 0 };

  parse(text: string): unknown {
    const reused = this.#parseReusing(text);
    if (reused !== undefined) return reused.value;
    this.stats.wholeParses++;
    this.#objects = new Map();
    return JSON.parse(text);
  }

  #parseReusing(text: string): { value: unknown } | undefined {
    if (text.includes('"__proto__"')) return undefined;
    const spans = objectSpans(text);
    if (!spans.length) return undefined;
    const next = new Map<string, unknown>();
    const values: unknown[] = [];
    const pieces: string[] = [];
    let at = 0;
    let parsed = 0;
    for (const [start, end] of spans) {
      const body = text.slice(start, end);
      // The same text twice in one document: two objects, as JSON.parse gives.
      let value = next.has(body) ? undefined : this.#objects.get(body);
      if (value === undefined) {
        try {
          value = JSON.parse(body);
        } catch {
          return undefined;
        }
        parsed++;
      }
      if (!next.has(body)) next.set(body, value);
      pieces.push(text.slice(at, start), `${this.#quoted}${values.length}"`);
      values.push(value);
      at = end;
    }
    pieces.push(text.slice(at));
    let skeleton: unknown;
    try {
      skeleton = JSON.parse(pieces.join(''));
    } catch {
      return undefined;
    }
    const seen = new Uint8Array(values.length);
    let found = 0;
    const prefix = this.#placeholder;
    // Each placeholder back to its object; false when one is not a known, first-seen number.
    const put = (container: { [k: string | number]: unknown }, k: string | number): boolean => {
      const v = container[k];
      if (typeof v === 'string') {
        if (!v.startsWith(prefix)) return true;
        const i = Number(v.slice(prefix.length));
        if (!(i >= 0 && i < values.length) || seen[i]) return false;
        seen[i] = 1;
        found++;
        container[k] = values[i];
        return true;
      }
      return v === null || typeof v !== 'object' || fill(v);
    };
    const fill = (node: object): boolean => {
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) if (!put(node as { [k: number]: unknown }, i)) return false;
        return true;
      }
      for (const k of Object.keys(node)) if (!put(node as Record<string, unknown>, k)) return false;
      return true;
    };
    if (skeleton === null || typeof skeleton !== 'object' || !fill(skeleton) || found !== values.length) return undefined;
    this.stats.parsed += parsed;
    this.stats.reused += values.length - parsed;
    this.#objects = next;
    return { value: skeleton };
  }
}

/** [start, end) of each outermost object opening per OPENER and closing at its indent. */
export function objectSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  let open: { indent: number; start: number } | undefined;
  let line = 0;
  while (line < text.length) {
    let eol = text.indexOf('\n', line);
    if (eol < 0) eol = text.length;
    if (open) {
      // The closing line: the opener's indent, then `}` and maybe a comma.
      if (eol - line >= open.indent + 1 && text.charCodeAt(line + open.indent) === 125 /* } */ && isIndent(text, line, open.indent)) {
        const rest = eol - line - open.indent - 1;
        if (rest === 0 || (rest === 1 && text.charCodeAt(eol - 1) === 44 /* , */)) {
          spans.push([open.start, line + open.indent + 1]);
          open = undefined;
        }
      }
    } else if (text.charCodeAt(eol - 1) === 123 /* { */ && text.charCodeAt(line) === 32) {
      const m = OPENER.exec(text.slice(line, eol));
      if (m) open = { indent: m[1].length, start: eol - 1 };
    }
    line = eol + 1;
  }
  return spans;
}

/** Whether the `n` characters from `from` are all spaces. */
function isIndent(text: string, from: number, n: number): boolean {
  for (let i = from; i < from + n; i++) if (text.charCodeAt(i) !== 32) return false;
  return true;
}
