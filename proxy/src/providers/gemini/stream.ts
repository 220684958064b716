// streamGenerateContent?alt=sse → unified chunks. Every `data:` is a whole GenerateContentResponse
// holding only the new parts; usageMetadata in it is cumulative.
import type { ChatChunk, ChatChunkChoice, ChatDelta } from '../../unified/chat.ts';
import { GatewayError } from '../../unified/errors.ts';
import type { SseEvent, StreamContext, StreamTranslator } from '../../unified/stream.ts';
import { fromGeminiError } from './error.ts';
import { blockedPromptError, toFinishReason } from './finish.ts';
import { digestParts } from './parts.ts';
import type { GeminiGenerateContentResponse, GeminiUsageMetadata } from './types.ts';
import { toUsage } from './usage.ts';

interface ChoiceState {
  /** The role has been sent. */
  started: boolean;
  /** Tool calls emitted so far: the next call's index. */
  calls: number;
  /** reasoning_details emitted so far: the next detail's index. */
  details: number;
}

export function createGeminiStreamTranslator(ctx: StreamContext): StreamTranslator {
  let id = ctx.id;
  let model = ctx.model;
  let usage: GeminiUsageMetadata | undefined;
  const states = new Map<number, ChoiceState>();

  const chunk = (choices: ChatChunkChoice[]): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model,
    choices,
  });

  return {
    push(event: SseEvent): ChatChunk[] {
      const res = parseEvent(event.data);
      if (!res) return [];
      const blocked = blockedPromptError(res);
      if (blocked) throw blocked;
      if (res.responseId) id = res.responseId;
      if (res.modelVersion) model = res.modelVersion;
      if (res.usageMetadata) usage = res.usageMetadata;

      const out: ChatChunk[] = [];
      (res.candidates ?? []).forEach((candidate, position) => {
        const index = candidate.index ?? position;
        let state = states.get(index);
        if (!state) states.set(index, (state = { started: false, calls: 0, details: 0 }));

        const digest = digestParts(candidate.content?.parts ?? [], index, state.calls);
        const delta: ChatDelta = {};
        if (!state.started) delta.role = 'assistant';
        if (digest.reasoning) delta.reasoning = digest.reasoning;
        if (digest.text) delta.content = digest.text;
        if (digest.details.length) {
          // Indexes keep each detail a separate block for clients that merge deltas by index.
          delta.reasoning_details = digest.details.map((d) => ({ ...d, index: state.details++ }));
        }
        if (digest.toolCalls.length) {
          delta.tool_calls = digest.toolCalls.map((call) => ({
            index: state.calls++,
            id: call.id,
            type: 'function',
            function: { name: call.function.name, arguments: call.function.arguments },
          }));
        }
        if (Object.keys(delta).length) {
          state.started = true;
          out.push(chunk([{ index, delta, finish_reason: null }]));
        }
        if (candidate.finishReason) {
          const finish = toFinishReason(candidate.finishReason, state.calls > 0);
          out.push(chunk([{ index, delta: {}, finish_reason: finish }]));
        }
      });
      return out;
    },

    finish(): ChatChunk[] {
      return usage ? [{ ...chunk([]), usage: toUsage(usage) }] : [];
    },
  };
}

function parseEvent(data: string): GeminiGenerateContentResponse | undefined {
  const text = data.trim();
  if (!text || text === '[DONE]') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new GatewayError(502, 'malformed event in Gemini stream', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'gemini', upstream: true });
  }
  const errorHolder = Array.isArray(parsed) ? parsed[0] : parsed;
  if (typeof errorHolder === 'object' && errorHolder !== null && 'error' in errorHolder) {
    // Errors can arrive in-band once the stream has started.
    const code = (errorHolder as { error?: { code?: unknown } }).error?.code;
    const status = typeof code === 'number' && code >= 400 ? code : 500;
    const detail = fromGeminiError(status, parsed);
    throw new GatewayError(status, detail.message, {
      type: detail.type,
      code: detail.code,
      param: detail.param,
      provider: 'gemini',
      upstream: true,
    });
  }
  return parsed as GeminiGenerateContentResponse;
}
