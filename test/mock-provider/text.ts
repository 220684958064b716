// Deterministic text, token and vector helpers shared by every format.

import type { JsonObject } from './types.ts';
import { DEFAULT_EMBEDDING_DIMENSIONS, embedText } from './embeddings.ts';

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Token count used everywhere: whitespace-separated words. */
export function countWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13) || c === 160;
    if (space) inWord = false;
    else if (!inWord) {
      inWord = true;
      n++;
    }
  }
  return n;
}

/** Split text into word deltas that concatenate back to exactly the input ("a b" → ["a ", "b"]). */
export function splitWords(text: string): string[] {
  const pieces = text.match(/\S+\s*/g);
  if (!pieces) return text.length ? [text] : [];
  const lead = /^\s*/.exec(text)?.[0] ?? '';
  if (lead) pieces[0] = lead + pieces[0];
  return pieces;
}

/** Split a string into ≥ 2 roughly equal, non-empty pieces (for streamed tool arguments). */
export function splitPieces(text: string, maxLen = 12): string[] {
  if (text.length < 2) return [text];
  const count = Math.max(2, Math.ceil(text.length / maxLen));
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function replyText(userText: string, images: number): string {
  return `Mock reply to: ${userText}${images > 0 ? ` [images: ${images}]` : ''}`;
}

export function toolReplyText(results: string[]): string {
  return `Tool said: ${results.join(' | ')}`;
}

export function thinkingText(subject: string): string {
  return `Thinking about: ${subject}`;
}

export interface Truncation {
  text: string;
  /** Why generation stopped. */
  reason: 'stop' | 'length' | 'stop_sequence';
  stopSequence?: string;
}

/** Apply stop sequences, then a max-token (word) limit, deterministically. */
export function truncate(text: string, maxTokens: number | undefined, stops: string[]): Truncation {
  let out = text;
  let reason: Truncation['reason'] = 'stop';
  let stopSequence: string | undefined;
  let cut = -1;
  for (const s of stops) {
    if (!s) continue;
    const i = out.indexOf(s);
    if (i >= 0 && (cut < 0 || i < cut)) {
      cut = i;
      stopSequence = s;
    }
  }
  if (cut >= 0) {
    out = out.slice(0, cut);
    reason = 'stop_sequence';
  }
  if (maxTokens !== undefined && maxTokens >= 0 && countWords(out) > maxTokens) {
    const words = splitWords(out).slice(0, maxTokens);
    out = words.join('').trimEnd();
    reason = 'length';
    stopSequence = undefined;
  }
  return { text: out, reason, stopSequence };
}

export function stopList(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string');
  return [];
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Deterministic unit-length embedding for `text` (paraphrases close, see embeddings.ts). */
export function embed(text: string, dims = DEFAULT_EMBEDDING_DIMENSIONS): Float32Array {
  return embedText(text, dims);
}

export function embedBase64(vec: Float32Array): string {
  const buf = Buffer.alloc(vec.length * 4);
  for (let i = 0; i < vec.length; i++) buf.writeFloatLE(vec[i], i * 4);
  return buf.toString('base64');
}

/** Anthropic-style opaque signature for a thinking block; verifiable on the way back in. */
export function thinkingSignature(thinking: string): string {
  return Buffer.from(`mock-sig:${fnv1a(thinking).toString(16)}:${thinking.length}`).toString('base64');
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
