// Gemini's stop conditions → unified finish reasons and errors.
import type { FinishReason } from '../../unified/chat.ts';
import { GatewayError } from '../../unified/errors.ts';
import type { GeminiFinishReason, GeminiGenerateContentResponse } from './types.ts';

const FILTERED = new Set<string>([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/** Gemini says STOP after function calls too; OpenAI clients look for `tool_calls`. */
export function toFinishReason(reason: GeminiFinishReason | undefined, madeToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && FILTERED.has(reason)) return 'content_filter';
  return madeToolCalls ? 'tool_calls' : 'stop';
}

/** A prompt blocked before generation comes back as 200 with no candidates; surface it as an error. */
export function blockedPromptError(res: GeminiGenerateContentResponse): GatewayError | undefined {
  const reason = res.promptFeedback?.blockReason;
  if (!reason || res.candidates?.length) return undefined;
  const detail = res.promptFeedback?.blockReasonMessage;
  return new GatewayError(400, `prompt blocked by Gemini: ${reason}${detail ? ` (${detail})` : ''}`, {
    type: 'content_filter',
    code: reason,
    provider: 'gemini',
    upstream: true,
  });
}
