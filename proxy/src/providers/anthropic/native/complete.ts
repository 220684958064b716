// Anthropic's legacy Text Completions (`POST /v1/complete`) over unified chat: the
// "\n\nHuman: … \n\nAssistant:" prompt becomes messages, and the chat answer or chunks become a
// `completion` object or `completion` stream events. Pure translators.
import type { ChatChunk, ChatRequest, ChatResponse, FinishReason, Message, Usage } from '../../../unified/chat.ts';
import { invalidRequest } from '../../../unified/errors.ts';

export interface AnthropicCompleteRequest {
  model: string;
  prompt: string;
  max_tokens_to_sample: number;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream?: boolean;
  metadata?: { user_id?: string };
  /** Gateway extension. */
  fallbacks?: string[];
}

export type CompletionStopReason = 'stop_sequence' | 'max_tokens';

export interface AnthropicCompletion {
  type: 'completion';
  id: string;
  completion: string;
  stop_reason: CompletionStopReason | null;
  model: string;
  /** The reference gateway's addition; the legacy API itself reports none. */
  usage?: { input_tokens: number; output_tokens: number };
}

export interface CompletionStreamEncoder {
  push(chunk: ChatChunk): AnthropicCompletion[];
  finish(): AnthropicCompletion[];
}

const TURN = /\n\nHuman:|\n\nAssistant:/g;

/** Checks the body as the legacy API does and reads it into a chat request. */
export function fromAnthropicComplete(body: unknown): ChatRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('request body must be a JSON object');
  const b = body as Partial<AnthropicCompleteRequest>;
  if (typeof b.model !== 'string' || !b.model) throw invalidRequest('model: Field required', 'model');
  if (typeof b.prompt !== 'string') throw invalidRequest('prompt: Field required', 'prompt');
  if (typeof b.max_tokens_to_sample !== 'number' || !Number.isInteger(b.max_tokens_to_sample) || b.max_tokens_to_sample < 1) {
    throw invalidRequest('max_tokens_to_sample: a positive integer is required', 'max_tokens_to_sample');
  }
  if (b.stop_sequences !== undefined && !(Array.isArray(b.stop_sequences) && b.stop_sequences.every((s) => typeof s === 'string'))) {
    throw invalidRequest('stop_sequences: Input should be a valid list of strings', 'stop_sequences');
  }
  if (b.fallbacks !== undefined && !(Array.isArray(b.fallbacks) && b.fallbacks.every((f) => typeof f === 'string' && f !== ''))) {
    throw invalidRequest('fallbacks must be an array of provider/model names', 'fallbacks');
  }
  const chat: ChatRequest = { model: b.model, messages: promptToMessages(b.prompt), max_tokens: b.max_tokens_to_sample };
  if (b.fallbacks) chat.fallbacks = b.fallbacks;
  if (typeof b.temperature === 'number') chat.temperature = b.temperature;
  if (typeof b.top_p === 'number') chat.top_p = b.top_p;
  if (b.stop_sequences?.length) chat.stop = b.stop_sequences;
  if (typeof b.metadata?.user_id === 'string') chat.user = b.metadata.user_id;
  if (b.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/**
 * Text before the first Human turn is the system prompt; the final Assistant turn is where the
 * model writes, and text already in it is a prefill the answer continues.
 */
export function promptToMessages(prompt: string): Message[] {
  // The legacy API trims trailing whitespace before validating ("\n\nAssistant: " is fine).
  const text = prompt.replace(/\s+$/, '');
  const turns: { role: 'user' | 'assistant'; text: string }[] = [];
  let system = '';
  let last = 0;
  let role: 'user' | 'assistant' | undefined;
  for (const m of text.matchAll(TURN)) {
    const chunk = text.slice(last, m.index);
    if (role) turns.push({ role, text: chunk.trim() });
    else system = chunk.trim();
    role = m[0].endsWith('Human:') ? 'user' : 'assistant';
    last = m.index + m[0].length;
  }
  if (role) turns.push({ role, text: text.slice(last).trim() });
  if (turns[0]?.role !== 'user') throw invalidRequest('prompt must start with "\\n\\nHuman:" turn (after an optional system prompt)', 'prompt');
  if (turns.at(-1)?.role !== 'assistant') throw invalidRequest('prompt must end with "\\n\\nAssistant:" turn', 'prompt');
  const final = turns.pop()!;
  const messages: Message[] = system ? [{ role: 'system', content: system }] : [];
  for (const t of turns) messages.push({ role: t.role, content: t.text });
  if (final.text) messages.push({ role: 'assistant', content: final.text });
  return messages;
}

export function toCompletionStopReason(finish: FinishReason | null | undefined): CompletionStopReason {
  return finish === 'length' ? 'max_tokens' : 'stop_sequence';
}

/**
 * The legacy API's completion follows "Assistant:" directly, so it starts with a space; a
 * prefilled turn is continued as it is.
 */
function leadingSpace(text: string, prefilled: boolean): string {
  return !prefilled && text && !/^\s/.test(text) ? ` ${text}` : text;
}

function usageOf(u: Usage | undefined): AnthropicCompletion['usage'] {
  return u ? { input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens } : undefined;
}

export function toAnthropicCompletion(res: ChatResponse, req: ChatRequest, id: string): AnthropicCompletion {
  const choice = res.choices[0];
  const out: AnthropicCompletion = {
    type: 'completion',
    id,
    completion: leadingSpace(choice?.message.content ?? '', prefilled(req)),
    stop_reason: toCompletionStopReason(choice?.finish_reason),
    model: req.model,
  };
  const usage = usageOf(res.usage);
  if (usage) out.usage = usage;
  return out;
}

function prefilled(req: ChatRequest): boolean {
  return req.messages.at(-1)?.role === 'assistant';
}

/** `completion` events as text arrives, then one with an empty completion and the stop reason. */
export function createCompletionStreamEncoder(req: ChatRequest, id: string): CompletionStreamEncoder {
  let started = false;
  let finish: FinishReason | null = null;
  let usage: Usage | undefined;
  const event = (completion: string, stop: CompletionStopReason | null): AnthropicCompletion => ({ type: 'completion', id, completion, stop_reason: stop, model: req.model });
  return {
    push(chunk: ChatChunk) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices.find((c) => c.index === 0);
      if (!choice) return [];
      if (choice.finish_reason) finish = choice.finish_reason;
      const text = choice.delta.content ?? '';
      if (!text) return [];
      const out = event(started ? text : leadingSpace(text, prefilled(req)), null);
      started = true;
      return [out];
    },
    finish() {
      const last = event('', toCompletionStopReason(finish));
      const u = usageOf(usage);
      if (u) last.usage = u;
      return [last];
    },
  };
}

export function encodeCompletionEvent(ev: AnthropicCompletion): string {
  return `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
}
