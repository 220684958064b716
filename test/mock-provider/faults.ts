// Fault queue: faults are matched in queue order; each affects `times` matching requests (default 1).

import { isObject } from './text.ts';
import type { Fault, Format } from './types.ts';

const FORMATS: Format[] = ['openai', 'anthropic', 'gemini', 'cohere', 'bedrock', 'vertex', 'azure', 'openrouter'];

interface Queued {
  fault: Fault;
  left: number;
}

export class FaultQueue {
  #queue: Queued[] = [];

  get size(): number {
    return this.#queue.length;
  }

  add(fault: Fault): void {
    const problem = faultProblem(fault);
    if (problem) throw new TypeError(`invalid fault: ${problem}`);
    this.#queue.push({ fault: { ...fault }, left: fault.times ?? 1 });
  }

  clear(): void {
    this.#queue.length = 0;
  }

  list(): Fault[] {
    return this.#queue.map((q) => ({ ...q.fault, times: q.left }));
  }

  /** First queued fault matching the request; consumes one use of it. */
  take(format: Format, model: string | undefined): Fault | undefined {
    if (this.#queue.length === 0) return undefined;
    for (let i = 0; i < this.#queue.length; i++) {
      const q = this.#queue[i];
      if (q.fault.format !== undefined && q.fault.format !== format) continue;
      if (q.fault.model !== undefined && q.fault.model !== model && `models/${q.fault.model}` !== model) continue;
      q.left--;
      if (q.left <= 0) this.#queue.splice(i, 1);
      return q.fault;
    }
    return undefined;
  }
}

function nonNegative(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** Why `v` is not a valid Fault, or undefined when it is. */
export function faultProblem(v: unknown): string | undefined {
  if (!isObject(v)) return 'expected an object';
  const known = new Set(['format', 'model', 'status', 'message', 'retryAfter', 'latencyMs', 'resetAfterChunks', 'dropConnection', 'times', 'reply', 'oversize']);
  for (const k of Object.keys(v)) if (!known.has(k)) return `unknown field "${k}"`;
  if (v.format !== undefined && !FORMATS.includes(v.format as Format)) return `format must be one of ${FORMATS.join(', ')}`;
  if (v.model !== undefined && typeof v.model !== 'string') return 'model must be a string';
  if (v.status !== undefined && !(Number.isInteger(v.status) && (v.status as number) >= 100 && (v.status as number) <= 599)) return 'status must be an HTTP status code';
  if (v.message !== undefined && typeof v.message !== 'string') return 'message must be a string';
  if (v.retryAfter !== undefined && !nonNegative(v.retryAfter)) return 'retryAfter must be a non-negative number';
  if (v.latencyMs !== undefined && !nonNegative(v.latencyMs)) return 'latencyMs must be a non-negative number';
  if (v.resetAfterChunks !== undefined && !(Number.isInteger(v.resetAfterChunks) && (v.resetAfterChunks as number) >= 0)) return 'resetAfterChunks must be a non-negative integer';
  if (v.dropConnection !== undefined && typeof v.dropConnection !== 'boolean') return 'dropConnection must be a boolean';
  if (v.times !== undefined && !(Number.isInteger(v.times) && (v.times as number) >= 1)) return 'times must be a positive integer';
  if (v.reply !== undefined) {
    if (!isObject(v.reply)) return 'reply must be an object';
    const r = v.reply;
    if (r.status !== undefined && !(Number.isInteger(r.status) && (r.status as number) >= 200 && (r.status as number) <= 599)) return 'reply.status must be an HTTP status code';
    if (r.body !== undefined && typeof r.body !== 'string') return 'reply.body must be a string';
    if (r.events !== undefined && !(Array.isArray(r.events) && r.events.every((e) => typeof e === 'string'))) return 'reply.events must be a list of strings';
    if (r.headers !== undefined && !(isObject(r.headers) && Object.values(r.headers).every((h) => typeof h === 'string'))) return 'reply.headers must map names to strings';
  }
  if (v.oversize !== undefined) {
    if (!isObject(v.oversize) || !(Number.isInteger(v.oversize.bytes) && (v.oversize.bytes as number) > 0)) return 'oversize.bytes must be a positive integer';
    if (v.oversize.stream !== undefined && typeof v.oversize.stream !== 'boolean') return 'oversize.stream must be a boolean';
  }
  return undefined;
}
