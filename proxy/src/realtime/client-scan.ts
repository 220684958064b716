// A client event's type read off its bytes, with the frame checked as JSON on the way, and no
// string or object made: for the events nothing in the gateway needs to look inside. JSON.parse of
// an `input_audio_buffer.append` decodes the frame to a string and copies its base64 audio into
// another (about 13 KB of young garbage per 100 ms of audio), only for the relay to send the frame's
// own bytes on. This scan answers a type only where JSON.parse would answer an object with that
// type; anything it is not sure of (an escape in a key or in the type, nesting deeper than it
// tracks, any error) answers undefined, and the caller parses as before (protocol.ts), which says
// what is wrong with a bad frame.
import { CLIENT_EVENT_TYPES } from './protocol.ts';

const TYPES: readonly string[] = [...CLIENT_EVENT_TYPES];
const TYPE_BYTES: readonly Buffer[] = TYPES.map((t) => Buffer.from(t, 'latin1'));
const TYPE_KEY = Buffer.from('type', 'latin1');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Containers deeper than this are left to JSON.parse (no event of the protocol nests so deep). */
const MAX_DEPTH = 64;
/** The open containers: 1 an object, 0 an array (one scan at a time: the relay is synchronous). */
const stack = new Uint8Array(MAX_DEPTH);

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isDigit = (b: number): boolean => b >= ZERO && b <= NINE;
const isHex = (b: number): boolean => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** Set by readString: whether the string just read had an escape. */
let escaped = false;

/** A string's run of bytes read one by one before the rest is read four at a time. */
const BYTEWISE = 64;

/** The first byte from `from` that is a quote, a backslash or a control character (or `end`). */
function plainUntil(data: Buffer, from: number, end: number): number {
  let i = from;
  while (i < end) {
    const b = data[i];
    if (b === QUOTE || b === BACKSLASH || b < 0x20) return i;
    i++;
  }
  return end;
}

/** Where the frame's next backslash is (-1: none after it; -2: not looked for yet in this frame). */
let backslash = -2;

/**
 * plainUntil over a long run (base64 audio): the run's end is its next quote or backslash, found by
 * Buffer#indexOf (memchr), and the bytes up to it are checked for controls a 32-bit word at a time,
 * two words a step (only a word with a byte under 0x20 is looked at byte by byte). Signed words:
 * an unsigned one over 2^31 is a float to the JIT. On 6,400 characters of base64, 1.8 µs against
 * 3.2 µs for decoding the frame and JSON.parse (and 3.1 µs for a byte loop).
 */
function plainRun(data: Buffer, from: number, end: number): number {
  const quote = data.indexOf(QUOTE, from);
  if (quote < 0) return end;
  if (backslash !== -1 && backslash < from) backslash = data.indexOf(BACKSLASH, from);
  const stop = backslash >= 0 && backslash < quote ? backslash : quote;
  let i = from;
  while (i < stop && ((data.byteOffset + i) & 3) !== 0) {
    if (data[i] < 0x20) return i;
    i++;
  }
  if (i === stop) return stop;
  const words = new Int32Array(data.buffer, data.byteOffset + i, (stop - i) >>> 2);
  const n = words.length;
  let w = 0;
  // Nonzero exactly when some byte of the word is under 0x20.
  for (; w + 1 < n; w += 2) {
    const a = words[w];
    const b = words[w + 1];
    if ((((a - 0x20202020) & ~a) | ((b - 0x20202020) & ~b)) & 0x80808080) break;
  }
  return plainUntil(data, i + w * 4, stop);
}

/** The index after the string whose opening quote is at `at`, or -1 if it is not valid JSON. */
function readString(data: Buffer, at: number): number {
  escaped = false;
  const end = data.length;
  let i = at + 1;
  while (i < end) {
    const run = Math.min(end, i + BYTEWISE);
    i = plainUntil(data, i, run);
    if (i === run) {
      if (i === end) return -1;
      i = plainRun(data, i, end);
      if (i === end) return -1;
    }
    const b = data[i];
    if (b === QUOTE) return i + 1;
    if (b < 0x20) return -1;
    escaped = true;
    const e = data[i + 1];
    if (e === 0x75) {
      // \uXXXX
      if (i + 5 >= end || !isHex(data[i + 2]) || !isHex(data[i + 3]) || !isHex(data[i + 4]) || !isHex(data[i + 5])) return -1;
      i += 6;
    } else if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) i += 2;
    else return -1;
  }
  return -1;
}

/** The index after the number at `at` (JSON's grammar), or -1. */
function readNumber(data: Buffer, at: number): number {
  const end = data.length;
  let i = at;
  if (data[i] === MINUS) i++;
  if (i >= end) return -1;
  if (data[i] === ZERO) i++;
  else if (isDigit(data[i])) while (i < end && isDigit(data[i])) i++;
  else return -1;
  if (i < end && data[i] === DOT) {
    const from = ++i;
    while (i < end && isDigit(data[i])) i++;
    if (i === from) return -1;
  }
  if (i < end && (data[i] === 0x65 || data[i] === 0x45)) {
    i++;
    if (i < end && (data[i] === PLUS || data[i] === MINUS)) i++;
    const from = i;
    while (i < end && isDigit(data[i])) i++;
    if (i === from) return -1;
  }
  return i;
}

/** The index after `word` (true, false, null) at `at`, or -1. */
function readWord(data: Buffer, at: number, word: string): number {
  if (at + word.length > data.length) return -1;
  for (let k = 0; k < word.length; k++) if (data[at + k] !== word.charCodeAt(k)) return -1;
  return at + word.length;
}

function skipSpace(data: Buffer, at: number): number {
  let i = at;
  while (i < data.length && isSpace(data[i])) i++;
  return i;
}

/** `data[from, to)` is `bytes`. */
function sameBytes(data: Buffer, from: number, to: number, bytes: Buffer): boolean {
  if (to - from !== bytes.length) return false;
  for (let k = 0; k < bytes.length; k++) if (data[from + k] !== bytes[k]) return false;
  return true;
}

/**
 * The type of a client event whose frame is a valid JSON object with a known client event type (the
 * protocol's own string), read without parsing; undefined when the frame must be parsed to say (it
 * is not such an object, or the scan cannot tell without decoding an escape).
 */
export function scannedClientType(data: Buffer): string | undefined {
  const end = data.length;
  backslash = -2;
  let i = skipSpace(data, 0);
  if (i >= end || data[i] !== OPEN_OBJECT) return undefined;
  // The last top-level `type` member's string (JSON.parse keeps the last of duplicate keys).
  let typeFrom = -1;
  let typeTo = -1;
  let depth = 0;
  // Each iteration reads one value; `i` is where it starts (after a key's colon, a comma or an opening).
  let topKeyFrom = -1;
  let topKeyTo = -1;
  stack[depth++] = 1;
  i++;
  // After an opening: an empty container may close at once.
  let opened = true;
  for (;;) {
    i = skipSpace(data, i);
    if (i >= end) return undefined;
    const inObject = stack[depth - 1] === 1;
    if (opened && data[i] === (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) {
      // An empty container: fall through to what follows a value.
      opened = false;
      depth--;
      i++;
    } else {
      opened = false;
      if (inObject) {
        // A member: its key, a colon.
        if (data[i] !== QUOTE) return undefined;
        const keyFrom = i + 1;
        i = readString(data, i);
        if (i < 0) return undefined;
        if (depth === 1) {
          // A top-level key with an escape might decode to "type": JSON.parse says.
          if (escaped) return undefined;
          topKeyFrom = keyFrom;
          topKeyTo = i - 1;
        }
        i = skipSpace(data, i);
        if (i >= end || data[i] !== COLON) return undefined;
        i = skipSpace(data, i + 1);
        if (i >= end) return undefined;
      }
      const b = data[i];
      const isTypeMember = depth === 1 && sameBytes(data, topKeyFrom, topKeyTo, TYPE_KEY);
      if (b === QUOTE) {
        const from = i + 1;
        i = readString(data, i);
        if (i < 0) return undefined;
        if (isTypeMember) {
          if (escaped) return undefined;
          typeFrom = from;
          typeTo = i - 1;
        }
      } else {
        // Any other value for `type` is not a string: JSON.parse's reading says how the event is bad.
        if (isTypeMember) return undefined;
        if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
          if (depth === MAX_DEPTH) return undefined;
          stack[depth++] = b === OPEN_OBJECT ? 1 : 0;
          opened = true;
          i++;
          continue;
        }
        if (b === MINUS || isDigit(b)) i = readNumber(data, i);
        else if (b === 0x74) i = readWord(data, i, 'true');
        else if (b === 0x66) i = readWord(data, i, 'false');
        else if (b === 0x6e) i = readWord(data, i, 'null');
        else return undefined;
        if (i < 0) return undefined;
      }
    }
    // After a value: a comma and the next, or the container's end (and maybe its parent's).
    for (;;) {
      if (depth === 0) {
        if (skipSpace(data, i) !== end || typeFrom < 0) return undefined;
        for (let k = 0; k < TYPE_BYTES.length; k++) if (sameBytes(data, typeFrom, typeTo, TYPE_BYTES[k])) return TYPES[k];
        return undefined;
      }
      i = skipSpace(data, i);
      if (i >= end) return undefined;
      const b = data[i];
      if (b === COMMA) {
        i++;
        break;
      }
      if (b !== (stack[depth - 1] === 1 ? CLOSE_OBJECT : CLOSE_ARRAY)) return undefined;
      depth--;
      i++;
    }
  }
}
