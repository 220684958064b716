import type { Usage } from '../../unified/chat.ts';
import type { GeminiUsageMetadata } from './types.ts';

/**
 * Gemini counts thoughts apart from the answer; OpenAI counts reasoning inside completion tokens.
 * Tool-use prompt tokens (server-side tools' results) are input, so they join the prompt side,
 * which keeps prompt + completion = Gemini's total.
 */
export function toUsage(meta: GeminiUsageMetadata): Usage {
  const prompt = (meta.promptTokenCount ?? 0) + (meta.toolUsePromptTokenCount ?? 0);
  const completion = (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0);
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: meta.totalTokenCount ?? prompt + completion,
  };
  if (meta.cachedContentTokenCount !== undefined) usage.prompt_tokens_details = { cached_tokens: meta.cachedContentTokenCount };
  if (meta.thoughtsTokenCount !== undefined) usage.completion_tokens_details = { reasoning_tokens: meta.thoughtsTokenCount };
  return usage;
}
