// Unified stream chunks → native streamGenerateContent?alt=sse events: the inverse of ../stream.ts.
// Each event is a whole GenerateContentResponse holding only the new parts. Gemini sends function
// calls whole, so tool-call deltas are buffered until their arguments are complete. The finish
// reason is held for the last event, which also carries usageMetadata: @google/genai's chat only
// records a streamed turn whose events all have content and one of which has a finish reason.
import type { ChatChunk, Usage } from '../../../unified/chat.ts';
import type { GeminiCandidate, GeminiFinishReason, GeminiGenerateContentResponse, GeminiPart } from '../types.ts';
import { functionCallPart, isSignature, textParts, thoughtParts, toGeminiFinishReason, toUsageMetadata } from './response.ts';

export interface GeminiStreamEncoder {
  push(chunk: ChatChunk): GeminiGenerateContentResponse[];
  /** The closing event: pending calls, finish reasons and usage. Call once, at end of stream. */
  finish(): GeminiGenerateContentResponse[];
}

interface BufferedCall {
  id?: string;
  name: string;
  arguments: string;
}

interface CandidateState {
  /** Tool calls whose arguments may still grow, by unified tool-call index. */
  calls: Map<number, BufferedCall>;
  finish?: GeminiFinishReason;
}

export function createGeminiStreamEncoder(model: string, responseId: string): GeminiStreamEncoder {
  const states = new Map<number, CandidateState>();
  /** Signatures of function calls (reasoning.encrypted with the call's id), possibly sent before the call is complete. */
  const callSignatures = new Map<string, string>();
  let usage: Usage | undefined;

  const response = (candidates: GeminiCandidate[]): GeminiGenerateContentResponse => ({
    candidates,
    modelVersion: model,
    responseId,
  });

  const stateOf = (index: number): CandidateState => {
    let state = states.get(index);
    if (!state) states.set(index, (state = { calls: new Map() }));
    return state;
  };

  /** The buffered calls as functionCall parts (once a later block, a new call or the finish shows they are complete). */
  const flush = (state: CandidateState): GeminiPart[] => {
    const parts = [...state.calls.values()].map((call) =>
      functionCallPart(call, call.id === undefined ? undefined : callSignatures.get(call.id)),
    );
    state.calls.clear();
    return parts;
  };

  return {
    push(chunk: ChatChunk): GeminiGenerateContentResponse[] {
      if (chunk.usage) usage = chunk.usage;
      const candidates: GeminiCandidate[] = [];
      for (const choice of chunk.choices) {
        const state = stateOf(choice.index);
        const delta = choice.delta ?? {};
        const details = delta.reasoning_details ?? [];
        for (const d of details) if (isSignature(d) && d.id !== undefined) callSignatures.set(d.id, d.data);

        const content = [
          ...thoughtParts(details, delta.reasoning),
          ...textParts(delta.content || delta.refusal || '', details.filter(isSignature).filter((d) => d.id === undefined)),
        ];
        const parts = content.length ? [...flush(state), ...content] : [];

        for (const tc of delta.tool_calls ?? []) {
          let call = state.calls.get(tc.index);
          if (!call) {
            parts.push(...flush(state));
            state.calls.set(tc.index, (call = { name: '', arguments: '' }));
          }
          if (tc.id && call.id === undefined) call.id = tc.id;
          if (tc.function?.name && !call.name) call.name = tc.function.name;
          call.arguments += tc.function?.arguments ?? '';
        }

        if (choice.finish_reason) {
          parts.push(...flush(state));
          state.finish = toGeminiFinishReason(choice.finish_reason);
        }
        if (parts.length) candidates.push({ content: { role: 'model', parts }, index: choice.index });
      }
      return candidates.length ? [response(candidates)] : [];
    },

    finish(): GeminiGenerateContentResponse[] {
      const candidates: GeminiCandidate[] = [];
      for (const [index, state] of states) {
        const parts = flush(state);
        if (!parts.length && !state.finish) continue;
        candidates.push({
          // Every event needs content for the SDK's chat history; Gemini's own closing event has an empty text part.
          content: { role: 'model', parts: parts.length ? parts : [{ text: '' }] },
          ...(state.finish && { finishReason: state.finish }),
          index,
        });
      }
      if (!candidates.length && !usage) return [];
      const last: GeminiGenerateContentResponse = {};
      if (candidates.length) last.candidates = candidates;
      if (usage) last.usageMetadata = toUsageMetadata(usage);
      last.modelVersion = model;
      last.responseId = responseId;
      return [last];
    },
  };
}

/** One SSE event as streamGenerateContent?alt=sse frames it. */
export function encodeGeminiSse(res: GeminiGenerateContentResponse): string {
  return `data: ${JSON.stringify(res)}\r\n\r\n`;
}
