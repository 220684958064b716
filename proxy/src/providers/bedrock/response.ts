// Bedrock Converse response -> unified chat completion.
import type { AssistantMessage, ChatResponse, FinishReason, ReasoningDetail, ToolCall, Usage } from '../../unified/chat.ts';
import { answerObject, isObject, objectList, ShapeError } from '../../unified/answer-shape.ts';
import type { BedrockContentBlock, BedrockConverseResponse, BedrockStopReason, BedrockUsage } from './types.ts';

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export function toFinishReason(reason: BedrockStopReason | null | undefined): FinishReason | null {
  if (reason === null || reason === undefined) return null;
  return FINISH_REASONS[reason] ?? 'stop';
}

/** Bedrock's inputTokens exclude cache reads and writes; the prompt is all three. */
export function toUsage(u: BedrockUsage): Usage {
  const cacheRead = u.cacheReadInputTokens ?? 0;
  const prompt = (u.inputTokens ?? 0) + cacheRead + (u.cacheWriteInputTokens ?? 0);
  const completion = u.outputTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
}

export function fromBedrockResponse(res: BedrockConverseResponse, ctx: { id: string; model: string; created: number }): ChatResponse {
  const output = answerObject(res).output;
  if (!isObject(output) || !isObject(output.message)) throw new ShapeError("'output.message' is not an object");
  objectList(output.message, 'content');
  const texts: string[] = [];
  const thoughts: string[] = [];
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of res.output?.message?.content ?? []) {
    if (has(block, 'text')) texts.push(block.text);
    else if (has(block, 'toolUse')) {
      const t = block.toolUse;
      toolCalls.push({ id: t.toolUseId, type: 'function', function: { name: t.name, arguments: JSON.stringify(t.input ?? {}) } });
    } else if (has(block, 'reasoningContent')) {
      const r = block.reasoningContent;
      if (r.reasoningText) {
        thoughts.push(r.reasoningText.text);
        details.push({ type: 'reasoning.text', text: r.reasoningText.text, signature: r.reasoningText.signature, index: details.length });
      } else if (r.redactedContent) {
        details.push({ type: 'reasoning.encrypted', data: r.redactedContent, index: details.length });
      }
    }
  }
  const message: AssistantMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (thoughts.length > 0) message.reasoning = thoughts.join('');
  if (details.length > 0) message.reasoning_details = details;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const out: ChatResponse = {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: toFinishReason(res.stopReason) }],
  };
  if (res.usage) out.usage = toUsage(res.usage);
  return out;
}

function has<K extends 'text' | 'toolUse' | 'reasoningContent'>(
  block: BedrockContentBlock,
  key: K,
): block is Extract<BedrockContentBlock, Record<K, unknown>> {
  return typeof block === 'object' && block !== null && key in block;
}
