// What the session's log record says about its turns, read off the events as they pass: the usage
// of each `response.done`, the seconds of audio each way, and the latency from asking for a response
// to its first audio. Reading is cheap on purpose: an event's type is found in its first bytes and
// only the few events that carry numbers are parsed (audio deltas are measured by their length).
// Events come as text or as the UTF-8 bytes a relayed provider sent (read without decoding them).
import type { Usage } from '../unified/chat.ts';

/** A turn's numbers, once its response is done. */
export interface TurnSummary {
  responseId: string | undefined;
  status: string | undefined;
  usage: Usage | undefined;
  /** Seconds of audio the model sent in this response. */
  audioOutSeconds: number;
  /** From the client's `response.create` (or the server's `response.created`) to the first audio delta, ms. */
  firstAudioMs: number | undefined;
}

/** Bytes per second of each audio format the Realtime API names (PCM16 at 24 kHz unless G.711). */
const BYTES_PER_SECOND: Readonly<Record<string, number>> = { 'audio/pcm': 48_000, pcm16: 48_000, 'audio/pcmu': 8000, 'audio/pcma': 8000, g711_ulaw: 8000, g711_alaw: 8000 };
export const DEFAULT_BYTES_PER_SECOND = 48_000;

const TYPE = /"type"\s*:\s*"([^"]{1,80})"/;
/** Where the type is looked for: the first bytes (Realtime events put their type first). */
const TYPE_HEAD = 400;
const TYPE_KEY = Buffer.from('"type"', 'latin1');

/** An event's text or UTF-8 bytes. */
export type EventData = string | Buffer;

const QUOTE = 34;
const COLON = 58;
const EQUALS = 61;

/** What `\s` matches among latin1 characters (a byte read as latin1 is one character). */
const isSpace = (b: number): boolean => b === 32 || (b >= 9 && b <= 13) || b === 160;

/**
 * Provider event types answered as these very strings (compared in place, no string made per event):
 * those the tracker reads and the frequent deltas. Any other type is read out of the bytes.
 */
const KNOWN_TYPES: readonly string[] = [
  'session.created',
  'session.updated',
  'response.created',
  'response.done',
  'response.output_audio.delta',
  'response.audio.delta',
  'response.output_audio_transcript.delta',
  'response.output_text.delta',
  'error',
];
const KNOWN_TYPE_BYTES: readonly Buffer[] = KNOWN_TYPES.map((t) => Buffer.from(t, 'latin1'));

/** The type in `data[from, to)`: a known one's own string, or one read from the bytes. */
function typeAt(data: Buffer, from: number, to: number): string {
  const length = to - from;
  for (let k = 0; k < KNOWN_TYPE_BYTES.length; k++) {
    const known = KNOWN_TYPE_BYTES[k];
    if (known.length !== length) continue;
    let i = 0;
    while (i < length && data[from + i] === known[i]) i++;
    if (i === length) return KNOWN_TYPES[k];
  }
  return data.toString('latin1', from, to);
}

/**
 * An event's `type` from its first bytes: the first `"type"\s*:\s*"…"` (1 to 80 characters) in the
 * head. Bytes are scanned where they are, with no string made but an unusual type itself: this runs
 * for every provider event.
 */
export function eventType(data: EventData): string | undefined {
  if (typeof data === 'string') return TYPE.exec(data.length > TYPE_HEAD ? data.slice(0, TYPE_HEAD) : data)?.[1];
  const end = Math.min(data.length, TYPE_HEAD);
  for (let at = data.indexOf(TYPE_KEY); at >= 0 && at + TYPE_KEY.length < end; at = data.indexOf(TYPE_KEY, at + 1)) {
    let i = at + TYPE_KEY.length;
    while (i < end && isSpace(data[i])) i++;
    if (i >= end || data[i] !== COLON) continue;
    i++;
    while (i < end && isSpace(data[i])) i++;
    if (i >= end || data[i] !== QUOTE) continue;
    const from = ++i;
    // 1 to 80 characters, then the closing quote, all inside the head.
    while (i < end && i - from <= 80 && data[i] !== QUOTE) i++;
    if (i < end && data[i] === QUOTE && i > from && i - from <= 80) return typeAt(data, from, i);
  }
  return undefined;
}

/** Decoded bytes of the base64 string value of `field` in `data`, without decoding it. */
export function base64Bytes(data: EventData, field: string): number {
  const key = `"${field}":"`;
  const at = data.indexOf(key);
  if (at < 0) return 0;
  const start = at + key.length;
  // Base64 is ASCII, so a string's offsets and a buffer's are the same count.
  const end = typeof data === 'string' ? data.indexOf('"', start) : data.indexOf(QUOTE, start);
  if (end < 0) return 0;
  const code = (i: number): number => (typeof data === 'string' ? data.charCodeAt(i) : data[i]);
  let len = end - start;
  let pad = 0;
  if (len > 0 && code(end - 1) === EQUALS) pad++;
  if (len > 1 && code(end - 2) === EQUALS) pad++;
  len = Math.floor((len * 3) / 4) - pad;
  return Math.max(0, len);
}

const parse = (data: EventData): unknown => JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));

/** The Realtime `usage` object as the gateway's Usage. */
export function usageOf(u: unknown): Usage | undefined {
  if (typeof u !== 'object' || u === null) return undefined;
  const r = u as { input_tokens?: unknown; output_tokens?: unknown; total_tokens?: unknown; input_token_details?: { cached_tokens?: unknown } };
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  const prompt = n(r.input_tokens);
  const completion = n(r.output_tokens);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: n(r.total_tokens) || prompt + completion };
  const cached = n(r.input_token_details?.cached_tokens);
  if (cached) usage.prompt_tokens_details = { cached_tokens: cached };
  return usage;
}

/** The audio format a session.created/updated event sets for output, as bytes per second. */
function outputRate(session: unknown): number | undefined {
  const s = session as { audio?: { output?: { format?: { type?: unknown } | string } }; output_audio_format?: unknown } | undefined;
  const f = s?.audio?.output?.format;
  const name = typeof f === 'string' ? f : typeof f?.type === 'string' ? f.type : typeof s?.output_audio_format === 'string' ? s.output_audio_format : undefined;
  return name === undefined ? undefined : BYTES_PER_SECOND[name];
}

/** A JSON scalar member (`"key": value,`), as the fields before `format` in compact provider JSON. */
const SCALAR_MEMBER = String.raw`"[^"\\]*"\s*:\s*(?:"[^"\\]*"|[-\d.eE+]+|true|false|null)\s*,\s*`;
/** `"output":{…"format":{…"type":"audio/pcm"` or `"output":{…"format":"pcm16"`, scalars only before each. */
const OUTPUT_FORMAT = new RegExp(String.raw`"output"\s*:\s*\{\s*(?:${SCALAR_MEMBER})*"format"\s*:\s*(?:\{\s*(?:${SCALAR_MEMBER})*"type"\s*:\s*)?"([^"\\]+)"`);
const BETA_FORMAT = /"output_audio_format"\s*:\s*"([^"\\]+)"/;

/**
 * The output rate a session.created/updated event sets, read without parsing the event when its
 * output format is laid out as providers send it; a layout not read so (or a name not known) is
 * parsed. The mock and OpenAI send session.updated for every session.update: at 1,000 sessions the
 * parse was the relay's largest cost of its own.
 */
export function sessionOutputRate(data: EventData): number | undefined {
  const compact = typeof data === 'string' ? undefined : compactOutputRate(data);
  if (compact !== undefined) return compact;
  const found = matchFrom(data, OUTPUT_KEY, OUTPUT_FORMAT) ?? matchFrom(data, BETA_KEY, BETA_FORMAT);
  if (found !== undefined && BYTES_PER_SECOND[found] !== undefined) return BYTES_PER_SECOND[found];
  return outputRate((parse(data) as { session?: unknown }).session);
}

const OUTPUT_KEY = '"output"';
const BETA_KEY = '"output_audio_format"';
const NEEDLES: Readonly<Record<string, Buffer>> = { [OUTPUT_KEY]: Buffer.from(OUTPUT_KEY), [BETA_KEY]: Buffer.from(BETA_KEY) };

/**
 * `pattern`'s first match (group 1) in `data`, which can only start at `key`: the text is read from
 * the key's first occurrence on (the same first match, without a string of the whole event).
 */
function matchFrom(data: EventData, key: string, pattern: RegExp): string | undefined {
  const at = typeof data === 'string' ? data.indexOf(key) : data.indexOf(NEEDLES[key]);
  if (at < 0) return undefined;
  return pattern.exec(typeof data === 'string' ? data.slice(at) : data.toString('latin1', at))?.[1];
}

/** The GA layout as OpenAI and the mock send it, compact: `"output":{"format":{"type":"`. */
const COMPACT_OUTPUT = Buffer.from('"output":{"format":{"type":"');
const RATE_MEMBER = Buffer.from(',"rate":');
const RATE_NAMES: readonly Buffer[] = Object.keys(BYTES_PER_SECOND).map((name) => Buffer.from(name));
const RATE_VALUES: readonly number[] = Object.values(BYTES_PER_SECOND);
const CLOSE_BRACE = 125;
const isDigit = (b: number): boolean => b >= 48 && b <= 57;

/** `needle`'s bytes are `data`'s from `at` (compared in a loop: Buffer#compare allocates per call). */
function bytesAt(data: Buffer, at: number, needle: Buffer): boolean {
  if (at < 0 || at + needle.length > data.length) return false;
  for (let i = 0; i < needle.length; i++) if (data[at + i] !== needle[i]) return false;
  return true;
}

/**
 * The rate of a session event whose first `"output"` is laid out compactly as providers send it,
 * `"output":{"format":{"type":"<known name>"` then `}` or `,"rate":<digits>}`, compared in place
 * (no string, no match): what OUTPUT_FORMAT answers on such bytes. Any other layout, or a name not
 * known, answers undefined and the pattern reads it: a session.updated answers every session.update,
 * and the pattern's string and match were the relay's largest allocation of its own at 1,000
 * sessions.
 */
function compactOutputRate(data: Buffer): number | undefined {
  const at = data.indexOf(NEEDLES[OUTPUT_KEY]);
  if (!bytesAt(data, at, COMPACT_OUTPUT)) return undefined;
  const from = at + COMPACT_OUTPUT.length;
  const quote = data.indexOf(QUOTE, from);
  if (quote <= from) return undefined;
  // The pattern reads on past a `,` (a later "type" member would win), so only `}` or one numeric `rate` member then `}`.
  let next = quote + 1;
  if (bytesAt(data, next, RATE_MEMBER)) {
    next += RATE_MEMBER.length;
    const digits = next;
    while (next < data.length && isDigit(data[next])) next++;
    if (next === digits) return undefined;
  }
  if (data[next] !== CLOSE_BRACE) return undefined;
  for (let k = 0; k < RATE_NAMES.length; k++) {
    if (RATE_NAMES[k].length === quote - from && bytesAt(data, from, RATE_NAMES[k])) return RATE_VALUES[k];
  }
  return undefined;
}

const FORMAT_KEY = 'format"';
const FORMAT_NEEDLE = Buffer.from(FORMAT_KEY);

/**
 * When an event passed: the time, or a clock read only if the event's time is kept (most events'
 * is not, and the relay reads no clock for them).
 */
export type EventTime = number | (() => number);
const timeOf = (now: EventTime): number => (typeof now === 'number' ? now : now());

/** Follows one session's events (OpenAI's shape: a Gemini session's are translated first). */
export class TurnTracker {
  #rate = DEFAULT_BYTES_PER_SECOND;
  #askedAt: number | undefined;
  #firstAudioAt: number | undefined;
  #audioBytes = 0;
  /** Seconds of audio sent as media during the response being produced. */
  #mediaSeconds = 0;
  /** performance.now() of the session's first audio delta. */
  firstAudioAt: number | undefined;
  audioInSeconds = 0;
  audioOutSeconds = 0;
  /** A response is being produced (between response.created and response.done). */
  inFlight = false;

  /** A client event (already read): its type and text. */
  client(type: string, data: EventData, now: EventTime): void {
    if (type === 'response.create') this.#askedAt ??= timeOf(now);
    else if (type === 'input_audio_buffer.append') this.audioInSeconds += base64Bytes(data, 'audio') / this.#rate;
  }

  /**
   * Audio a WebRTC call's provider sent as media (RTP), not as events: its seconds count toward the
   * turn, and its first packet while a response is produced is the turn's first audio.
   */
  mediaOut(seconds: number, now: number): void {
    if (!this.inFlight) {
      // Audio outside a response (a provider's trailing frames) counts for the session only.
      this.audioOutSeconds += seconds;
      return;
    }
    this.#mediaSeconds += seconds;
    this.#firstAudioAt ??= now;
    this.firstAudioAt ??= now;
  }

  /** Audio a WebRTC call's client sent as media. */
  mediaIn(seconds: number): void {
    this.audioInSeconds += seconds;
  }

  /** A server event; answers the finished turn at `response.done`. */
  server(type: string, data: EventData, now: EventTime): TurnSummary | undefined {
    switch (type) {
      case 'response.created':
        this.inFlight = true;
        this.#askedAt ??= timeOf(now);
        return undefined;
      case 'response.output_audio.delta':
      case 'response.audio.delta':
        this.#firstAudioAt ??= timeOf(now);
        this.firstAudioAt ??= this.#firstAudioAt;
        this.#audioBytes += base64Bytes(data, 'delta');
        return undefined;
      case 'session.created':
      case 'session.updated': {
        // Only an event naming a format can change the rate (`format` or `output_audio_format`).
        if ((typeof data === 'string' ? data.indexOf(FORMAT_KEY) : data.indexOf(FORMAT_NEEDLE)) < 0) return undefined;
        const rate = sessionOutputRate(data);
        if (rate) this.#rate = rate;
        return undefined;
      }
      case 'response.done': {
        const response = (parse(data) as { response?: { id?: unknown; status?: unknown; usage?: unknown } }).response;
        const turn: TurnSummary = {
          responseId: typeof response?.id === 'string' ? response.id : undefined,
          status: typeof response?.status === 'string' ? response.status : undefined,
          usage: usageOf(response?.usage),
          audioOutSeconds: this.#audioBytes / this.#rate + this.#mediaSeconds,
          firstAudioMs: this.#firstAudioAt !== undefined && this.#askedAt !== undefined ? this.#firstAudioAt - this.#askedAt : undefined,
        };
        this.audioOutSeconds += turn.audioOutSeconds;
        this.inFlight = false;
        this.#askedAt = undefined;
        this.#firstAudioAt = undefined;
        this.#audioBytes = 0;
        this.#mediaSeconds = 0;
        return turn;
      }
      default:
        return undefined;
    }
  }
}
