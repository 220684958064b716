// How chat and text completion chunks are written to a client as SSE (`data: <json>` … `data: [DONE]`).
import type { ChatChunk, ExtraFields, FinishReason, Usage } from '../unified/chat.ts';
import type { GatewayError } from '../unified/errors.ts';
import type { SseEvent } from '../unified/stream.ts';
import type { StreamPlan } from '../pipeline/stream.ts';
import { readOpenAIChunk } from '../providers/openai/adapter.ts';

interface Chunk {
  choices: { finish_reason: FinishReason | null }[];
  usage?: Usage | null;
  extra_fields?: ExtraFields;
}

export interface ChunkSource<T> {
  push(ev: SseEvent): T[];
  finish(): T[];
}

export function chunkStreamPlan<T extends Chunk>(translator: ChunkSource<T>, includeUsage: boolean): StreamPlan<T> {
  return {
    translator,
    encode: (c) => `data: ${JSON.stringify(c)}\n\n`,
    done: 'data: [DONE]\n\n',
    usage: (c) => c.usage,
    terminal: (c) => c.choices.length === 0 || c.choices.some((ch) => ch.finish_reason),
    // The usage-only chunk exists because the gateway always asks for usage; show it only on request.
    visible: (c) => includeUsage || c.choices.length > 0,
    decorate: (c, extra) => {
      c.extra_fields = extra;
    },
    errorEvent: (err) => `data: ${JSON.stringify(err.toBody())}\n\n`,
  };
}

export function mapSource<A, B>(source: ChunkSource<A>, f: (a: A) => B): ChunkSource<B> {
  return { push: (ev) => source.push(ev).map(f), finish: () => source.finish().map(f) };
}

/** An OpenAI-format chunk kept as the upstream's JSON text. */
export interface PassthroughChunk {
  json: string;
  usage?: Usage;
  usageOnly: boolean;
  extra?: string;
}

const USAGE = /"usage"\s*:\s*\{/;
/** A chunk that ends a choice (a non-null finish_reason). */
const FINISH = /"finish_reason"\s*:\s*"/;
/** A chunk that plainly has its `choices` list passes unparsed; anything else is read to be checked. */
const CHOICES = /"choices"\s*:\s*\[/;

/** An event that passes unread: a JSON object that plainly has its choices and no usage. */
function plainChunk(data: string): boolean {
  return data.charCodeAt(0) === 123 && data.charCodeAt(data.length - 1) === 125 && CHOICES.test(data) && !USAGE.test(data);
}

/** USAGE on the bytes of a non-ASCII text: a non-ASCII space (which `\s` takes) is bytes past 0x7f. */
const USAGE_BYTES = /"usage"[\s\x80-\xff]*:[\s\x80-\xff]*\{/;
/** CHOICES with ASCII spaces only: where it matches the bytes it matches the text. */
const CHOICES_ASCII = /"choices"[\t\n\v\f\r ]*:[\t\n\v\f\r ]*\[/;

/**
 * plainChunk on the data's UTF-8 bytes as Latin-1 text, without decoding them: the same text when
 * they are ASCII; otherwise true only where plainChunk is (the event then goes through plainChunk
 * on its text).
 */
function plainChunkBytes(data: string, ascii: boolean): boolean {
  if (ascii) return plainChunk(data);
  return data.charCodeAt(0) === 123 && data.charCodeAt(data.length - 1) === 125 && CHOICES_ASCII.test(data) && !USAGE_BYTES.test(data);
}

/**
 * OpenAI-format upstream to OpenAI-format client, raw capture off: chunks pass through as text with
 * `extra_fields` spliced in, and only the usage chunk is parsed. Saves a parse and a stringify per chunk;
 * where nothing reads the items, `relay` skips the items too (pipeline/relay.ts).
 */
export function passthroughChunkPlan(includeUsage: boolean): StreamPlan<PassthroughChunk> {
  return includeUsage ? PASSTHROUGH_WITH_USAGE : PASSTHROUGH;
}

// The plan holds no state of a stream: made twice, not per stream (its closures would otherwise be
// allocated, and kept for the stream's life, on every held stream).
function makePassthroughChunkPlan(includeUsage: boolean): StreamPlan<PassthroughChunk> {
  return {
    relay: {
      plain: plainChunk,
      plainBytes: plainChunkBytes,
      splice: [',"extra_fields":', '}\n\n'],
    },
    translator: {
      push: (ev) => {
        if (ev.data === '[DONE]') return [];
        const plain = ev.data.charCodeAt(0) === 123 && ev.data.trimEnd().endsWith('}') && CHOICES.test(ev.data);
        if (plain && !USAGE.test(ev.data)) return [{ json: ev.data, usageOnly: false }];
        // Throws the upstream's in-band error, or a ShapeError for a chunk of the wrong shape.
        const parsed = readOpenAIChunk(ev.data) as { usage?: Usage | null; choices: unknown[] };
        if (!parsed.usage) return [{ json: ev.data, usageOnly: false }];
        return [{ json: ev.data, usage: parsed.usage, usageOnly: !parsed.choices?.length }];
      },
      finish: () => [],
    },
    encode: (c) => {
      const end = c.json.lastIndexOf('}');
      return end < 0 ? `data: ${c.json}\n\n` : `data: ${c.json.slice(0, end)},"extra_fields":${c.extra}}\n\n`;
    },
    done: 'data: [DONE]\n\n',
    usage: (c) => c.usage,
    // Only held back when a cache miss's cache_debug must reach the final chunk (raw capture never takes this plan).
    terminal: (c) => c.usage !== undefined || FINISH.test(c.json),
    visible: (c) => includeUsage || !c.usageOnly,
    decorate: (c, extra) => {
      c.extra = JSON.stringify(extra);
    },
    errorEvent: (err) => `data: ${JSON.stringify(err.toBody())}\n\n`,
  };
}

const PASSTHROUGH = makePassthroughChunkPlan(false);
const PASSTHROUGH_WITH_USAGE = makePassthroughChunkPlan(true);

/** One upstream event's worth of a native stream, already encoded, with the usage it reported. */
export interface EncodedItem {
  text: string;
  usage?: Usage;
}

export interface NativeEncoder<E> {
  push(chunk: ChatChunk): E[];
  finish(): E[];
}

/**
 * For the compatibility prefixes: unified chunks (from any provider) re-encoded as a native
 * provider's stream events, e.g. Anthropic's named SSE events or Gemini's `data:` frames.
 */
export function encodedStreamPlan<E>(
  source: ChunkSource<ChatChunk>,
  encoder: NativeEncoder<E>,
  encode: (event: E) => string,
  errorEvent: (err: GatewayError) => string,
): StreamPlan<EncodedItem> {
  const items = (chunks: ChatChunk[]): EncodedItem[] =>
    chunks.map((c) => ({ text: encoder.push(c).map(encode).join(''), ...(c.usage ? { usage: c.usage } : {}) }));
  return {
    translator: {
      push: (ev) => items(source.push(ev)),
      finish: () => [...items(source.finish()), { text: encoder.finish().map(encode).join('') }],
    },
    encode: (i) => i.text,
    done: '',
    usage: (i) => i.usage,
    terminal: () => false,
    visible: (i) => i.text.length > 0,
    decorate: () => undefined,
    errorEvent,
  };
}
