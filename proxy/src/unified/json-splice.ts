// Editing JSON text without parsing all of it: for answers that pass through in the client's own
// format, where a full parse and re-serialisation would be the gateway's biggest per-request cost.

/** Adds `"key": value` as the last member of the top-level object `text`; undefined if not an object. */
export function appendMember(text: string, key: string, value: unknown): string | undefined {
  const end = lastBrace(text);
  return end < 0 ? undefined : `${text.slice(0, end)}${memberAt(text, end, key, value)}${text.slice(end)}`;
}

/** A text and its length in UTF-8 bytes. */
export interface SizedText {
  readonly text: string;
  readonly bytes: number;
}

/**
 * appendMember's text with its UTF-8 length, counted on the two parts: a count of the joined text
 * would first copy it flat, a copy the answer's write then makes again with its head.
 */
export function appendMemberSized(text: string, key: string, value: unknown): SizedText | undefined {
  const end = lastBrace(text);
  if (end < 0) return undefined;
  const member = memberAt(text, end, key, value);
  // Split at an ASCII `}` and joined with ASCII punctuation: no UTF-16 pair is cut, so the lengths add.
  return { text: `${text.slice(0, end)}${member}${text.slice(end)}`, bytes: Buffer.byteLength(text) + Buffer.byteLength(member) };
}

/** Where the top-level object `text` closes; -1 if it is not an object. */
function lastBrace(text: string): number {
  const end = text.lastIndexOf('}');
  return end < 0 || text.charCodeAt(0) !== 123 /* { */ ? -1 : end;
}

/** The member's text as inserted before the closing brace at `end` (a comma unless the object is empty). */
function memberAt(text: string, end: number, key: string, value: unknown): string {
  const empty = /^\{\s*$/.test(text.slice(0, end));
  return `${empty ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(value)}`;
}

/**
 * The object under the last `"key":` in `text`, parsed alone. Keys inside string values cannot match
 * (their quotes are escaped), so the last match is a real member; nested objects are scanned with
 * string awareness to find the matching brace.
 */
export function extractObject(text: string, key: string): unknown {
  const at = text.lastIndexOf(`"${key}"`);
  if (at < 0) return undefined;
  let i = at + key.length + 2;
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t' || text[i] === ':')) i++;
  if (text[i] !== '{') return undefined;
  let depth = 0;
  let inString = false;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (inString) {
      if (c === 92 /* \ */) j++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) {
      try {
        return JSON.parse(text.slice(i, j + 1));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
