// A cached answer: what is stored (the answer as the client received it: JSON text, or a stream's
// encoded events with the stream's framing) and how it is served again. Streams are replayed item
// by item in the route's own framing (an Anthropic SDK client gets Anthropic events back); only the
// final chunk that carries extra_fields gets the full cache_debug. In-process callers (execute) got
// values, so they are stored and replayed as values.
import type { Outcome, StreamFormat } from '../pipeline/outcome.ts';
import type { GatewayError } from '../unified/errors.ts';

export type CacheDebug = Record<string, unknown> & { cache_hit: boolean; cache_id: string };

/** `cost`: the answer's price when it was stored, which a hit on it saved (absent when unpriced). */
export type StoredAnswer = { cost?: number } & (
  | { k: 'json'; status: number; text: string; headers?: Record<string, string | string[]>; provider: string; model: string }
  | { k: 'value'; status: number; value: unknown; provider: string; model: string }
  | { k: 'stream'; items: string[]; done: string; headers?: Record<string, string>; encoding?: BufferEncoding; provider: string; model: string }
  | { k: 'values'; items: unknown[]; provider: string; model: string }
  /** A relayed body (speech audio, a plain-text transcript), base64. */
  | { k: 'bytes'; status: number; headers: Record<string, string | string[]>; data: string; provider: string; model: string }
);

/** Streams longer than this are served but not stored. */
export const MAX_STREAM_ITEMS = 20_000;
/** Answers larger than this (characters) are served but not stored. */
export const MAX_STORED_CHARS = 8 * 1024 * 1024;

/** Relayed bodies larger than this (bytes) are served but not stored. */
export const MAX_STORED_BYTES = 6 * 1024 * 1024;
/** The headers that describe a relayed body; the rest (dates, upstream ids, cookies) belong to one answer. */
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-disposition', 'content-language']);

/** Builds what to store from a finished successful answer (undefined: nothing storable). */
/** `sentText`: a text answer as it was before the miss's cache_debug was spliced in. */
export function storedAnswer(result: Outcome, streamed: unknown[] | undefined, inProcess: boolean, provider: string, model: string, sentText?: string): StoredAnswer | undefined {
  switch (result.kind) {
    case 'json':
      if (inProcess) return { k: 'value', status: result.status, value: result.value, provider, model };
      // The miss's own cache_debug is not kept: a hit gets its own spliced in.
      return { k: 'json', status: result.status, text: JSON.stringify(result.value, (key, v: unknown) => (key === 'cache_debug' ? undefined : v)), provider, model };
    case 'text':
      return { k: 'json', status: result.status, text: sentText ?? result.text, ...(result.headers && { headers: result.headers }), provider, model };
    case 'stream': {
      if (!streamed || streamed.length > MAX_STREAM_ITEMS) return undefined;
      // The plan is the format object: what it never rendered (a usage chunk the client did not ask for) is left out.
      const visible = (result.format as { visible?: (item: unknown) => boolean }).visible;
      const shown = visible ? streamed.filter((i) => visible(i)) : streamed;
      if (inProcess) return { k: 'values', items: shown, provider, model };
      const f = result.format;
      return { k: 'stream', items: shown.map((i) => f.encode(i)), done: f.done, ...(f.headers && { headers: f.headers }), ...(f.encoding && { encoding: f.encoding }), provider, model };
    }
    case 'bytes': {
      if (!streamed || !streamed.every((c) => c instanceof Uint8Array)) return undefined;
      const body = Buffer.concat(streamed as Uint8Array[]);
      if (body.length > MAX_STORED_BYTES) return undefined;
      const headers = Object.fromEntries(Object.entries(result.headers).filter(([k]) => BODY_HEADERS.has(k.toLowerCase())));
      return { k: 'bytes', status: result.status, headers, data: body.toString('base64'), provider, model };
    }
    default:
      return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function withDebug(value: unknown, debug: CacheDebug): boolean {
  if (!isObject(value)) return false;
  // A Responses stream event carries extra_fields on its response object (response.completed).
  const extra = isObject(value.extra_fields) ? value.extra_fields : isObject(value.response) ? value.response.extra_fields : undefined;
  if (!isObject(extra)) return false;
  extra.cache_debug = debug;
  return true;
}

/** The final `data: {...}` event of an encoded item with extra_fields, given the full cache_debug. */
function debugLastEvent(text: string, debug: CacheDebug): string | undefined {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i].startsWith('data: {')) continue;
    try {
      const v = JSON.parse(lines[i].slice(6)) as unknown;
      if (!withDebug(v, debug)) return undefined;
      lines[i] = `data: ${JSON.stringify(v)}`;
      return lines.join('\n');
    } catch {
      return undefined;
    }
  }
  return undefined;
}

const replayError = (err: GatewayError) => `data: ${JSON.stringify(err.toBody())}\n\n`;

async function* oneByOne<T>(items: readonly T[]): AsyncGenerator<T[]> {
  for (const item of items) yield [item];
}

async function* single(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  yield chunk;
}

/** The outcome that serves a stored answer, with cache_debug where the answer has extra_fields. */
export function replay(stored: StoredAnswer, debug: CacheDebug): Outcome {
  switch (stored.k) {
    case 'json': {
      // Spliced into extra_fields when it is the last member (no parse of the whole answer), else parsed.
      let text = spliceDebug(stored.text, debug);
      if (text === undefined) {
        text = stored.text;
        try {
          const v = JSON.parse(text) as unknown;
          if (withDebug(v, debug)) text = JSON.stringify(v);
        } catch {
          // Not JSON (cannot happen for what is stored): served as it was.
        }
      }
      return { kind: 'text', status: stored.status, text, ...(stored.headers && { headers: stored.headers }) };
    }
    case 'value': {
      const v = structuredClone(stored.value);
      withDebug(v, debug);
      return { kind: 'json', status: stored.status, value: v };
    }
    case 'stream': {
      const items = [...stored.items];
      for (let i = items.length - 1; i >= 0; i--) {
        const changed = debugLastEvent(items[i], debug);
        if (changed !== undefined) {
          items[i] = changed;
          break;
        }
      }
      const format: StreamFormat<string> = {
        encode: (s) => s,
        done: stored.done,
        errorEvent: replayError,
        ...(stored.headers && { headers: stored.headers }),
        ...(stored.encoding && { encoding: stored.encoding }),
      };
      return { kind: 'stream', items: oneByOne(items), format: format as StreamFormat<unknown> };
    }
    case 'bytes': {
      // The body has no place for cache_debug: the request log keeps it.
      const body = Buffer.from(stored.data, 'base64');
      return { kind: 'bytes', status: stored.status, headers: { ...stored.headers, 'content-length': String(body.length) }, body: single(body) };
    }
    case 'values': {
      const items = structuredClone(stored.items);
      for (let i = items.length - 1; i >= 0; i--) if (withDebug(items[i], debug)) break;
      const format: StreamFormat<unknown> = { encode: (c) => `data: ${JSON.stringify(c)}\n\n`, done: 'data: [DONE]\n\n', errorEvent: replayError };
      return { kind: 'stream', items: oneByOne(items), format };
    }
  }
}

/** Where cache_debug goes in a JSON text: the text up to its closing `}}`, and the separator after extra_fields' last member. */
interface SplicePoint {
  head: string;
  sep: '' | ',';
}

/**
 * The splice point of `text`, when extra_fields is the answer's last member (as appendMember leaves
 * it) and holds no cache_debug yet; undefined otherwise.
 */
function splicePoint(text: string): SplicePoint | undefined {
  const body = text.trimEnd();
  const at = body.lastIndexOf('"extra_fields":{');
  if (at < 0 || !body.endsWith('}}')) return undefined;
  const extra = body.slice(at + 15, -1);
  try {
    // Only when extra_fields really is the last member (its value runs to the last brace but one).
    const parsed = JSON.parse(extra) as Record<string, unknown>;
    if ('cache_debug' in parsed) return undefined;
  } catch {
    return undefined;
  }
  return { head: body.slice(0, -2), sep: extra === '{}' ? '' : ',' };
}

const spliced = (p: SplicePoint, debug: CacheDebug) => `${p.head}${p.sep}"cache_debug":${JSON.stringify(debug)}}}`;

/** `text` with cache_debug added to its extra_fields (see splicePoint); undefined when it cannot be spliced. */
function spliceDebug(text: string, debug: CacheDebug): string | undefined {
  const p = splicePoint(text);
  return p && spliced(p, debug);
}

/**
 * A stored answer read once and ready to serve again: its envelope parsed and, for a JSON text,
 * the splice point found, so a hit on an entry served before costs neither (see stage.ts).
 */
export interface ReadyAnswer {
  stored: StoredAnswer;
  splice: SplicePoint | undefined;
  /** A direct hit's text with its cache_debug, made on the first direct hit (see serveDirect). */
  direct?: { id: string; text: string };
}

/** Reads an entry's stored value (undefined: not what the cache writes). */
export function readyAnswer(value: string): ReadyAnswer | undefined {
  let stored: StoredAnswer;
  try {
    stored = JSON.parse(value) as StoredAnswer;
  } catch {
    return undefined;
  }
  return { stored, splice: stored.k === 'json' ? splicePoint(stored.text) : undefined };
}

/** replay() of a ready answer; a JSON text with a splice point is served without a parse. */
export function serveReady(ready: ReadyAnswer, debug: CacheDebug): Outcome {
  const { stored, splice } = ready;
  if (splice && stored.k === 'json') return { kind: 'text', status: stored.status, text: spliced(splice, debug), ...(stored.headers && { headers: stored.headers }) };
  return replay(stored, debug);
}

/** A direct hit's cache_debug: it names nothing but the entry. */
export const directDebug = (id: string): CacheDebug => ({ cache_hit: true, cache_id: id, hit_type: 'direct' });

/**
 * serveReady() of a direct hit (`debug` from directDebug): its cache_debug is the same on every
 * direct hit of the entry, so a JSON text is spliced once and the next hits reuse it.
 */
export function serveDirect(ready: ReadyAnswer, debug: CacheDebug): Outcome {
  const { stored, splice } = ready;
  if (!splice || stored.k !== 'json') return replay(stored, debug);
  let direct = ready.direct;
  if (direct?.id !== debug.cache_id) direct = ready.direct = { id: debug.cache_id, text: spliced(splice, debug) };
  return { kind: 'text', status: stored.status, text: direct.text, ...(stored.headers && { headers: stored.headers }) };
}

/**
 * Adds cache_debug to a miss's JSON answer before it is written (the after hook of a JSON answer
 * runs first). Returns a text answer's text as it was, for storing.
 */
export function debugMiss(result: Outcome, debug: CacheDebug): string | undefined {
  if (result.kind === 'json') {
    withDebug(result.value, debug);
    return undefined;
  }
  if (result.kind !== 'text') return undefined;
  const sent = result.text;
  const spliced = spliceDebug(sent, debug);
  if (spliced !== undefined) (result as { text: string }).text = spliced;
  return sent;
}
