// Gemini GenerateContentResponse → unified chat completion.
import type { AssistantMessage, ChatChoice, ChatResponse } from '../../unified/chat.ts';
import { blockedPromptError, toFinishReason } from './finish.ts';
import { digestParts } from './parts.ts';
import type { GeminiGenerateContentResponse } from './types.ts';
import { toUsage } from './usage.ts';
import { objectList } from '../../unified/answer-shape.ts';

export function fromGeminiResponse(
  res: GeminiGenerateContentResponse,
  ctx: { model: string; id: string; created: number },
): ChatResponse {
  // Candidates may be missing (a blocked prompt), never something other than a list.
  objectList(res, 'candidates', true);
  const blocked = blockedPromptError(res);
  if (blocked) throw blocked;

  const choices = (res.candidates ?? []).map((candidate, position): ChatChoice => {
    const index = candidate.index ?? position;
    const digest = digestParts(candidate.content?.parts ?? [], index);
    const hasCalls = digest.toolCalls.length > 0;
    const message: AssistantMessage = {
      role: 'assistant',
      // OpenAI sends null content next to tool calls, a string otherwise.
      content: hasCalls ? digest.text || null : (digest.text ?? ''),
    };
    if (hasCalls) message.tool_calls = digest.toolCalls;
    if (digest.reasoning !== undefined) message.reasoning = digest.reasoning;
    if (digest.details.length) message.reasoning_details = digest.details;
    return { index, message, finish_reason: toFinishReason(candidate.finishReason, hasCalls) };
  });

  const response: ChatResponse = {
    id: res.responseId || ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: res.modelVersion || ctx.model,
    choices,
  };
  if (res.usageMetadata) response.usage = toUsage(res.usageMetadata);
  return response;
}
