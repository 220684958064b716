// Cohere v2 /chat answer -> unified chat completion.
import type { AssistantMessage, ChatResponse, FinishReason, ToolCall, Usage } from '../../unified/chat.ts';
import { GatewayError } from '../../unified/errors.ts';
import type { ResponseContext } from '../adapter.ts';
import type { CohereChatResponse, CohereFinishReason, CohereToolCall, CohereUsage } from './types.ts';

export function toFinishReason(reason: CohereFinishReason | null | undefined): FinishReason | null {
  switch (reason) {
    case undefined:
    case null:
      return null;
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
      return 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    default:
      return reason.toLowerCase();
  }
}

/** Token counts, preferring the model's own over billed units (billing omits some tokens). */
export function toUsage(u: CohereUsage | undefined): Usage | undefined {
  if (!u) return undefined;
  const input = u.tokens?.input_tokens ?? u.billed_units?.input_tokens;
  const output = u.tokens?.output_tokens ?? u.billed_units?.output_tokens;
  if (input === undefined && output === undefined) return undefined;
  const usage: Usage = { prompt_tokens: input ?? 0, completion_tokens: output ?? 0, total_tokens: (input ?? 0) + (output ?? 0) };
  if (typeof u.cached_tokens === 'number' && u.cached_tokens > 0) usage.prompt_tokens_details = { cached_tokens: u.cached_tokens };
  return usage;
}

export function toToolCall(c: CohereToolCall): ToolCall {
  return { id: c.id, type: 'function', function: { name: c.function?.name ?? '', arguments: c.function?.arguments || '{}' } };
}

export function fromCohereResponse(body: CohereChatResponse, ctx: ResponseContext): ChatResponse {
  if (typeof body !== 'object' || body === null || typeof body.message !== 'object' || body.message === null) {
    throw new GatewayError(502, 'cohere returned an unexpected chat response', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'cohere', upstream: true });
  }
  const text: string[] = [];
  const thinking: string[] = [];
  for (const part of body.message.content ?? []) {
    if (part.type === 'text' && 'text' in part) text.push(part.text);
    else if (part.type === 'thinking' && 'thinking' in part) thinking.push(part.thinking);
  }
  const message: AssistantMessage = { role: 'assistant', content: text.length > 0 ? text.join('') : null };
  // The tool plan is the model's reasoning before it calls tools.
  if (body.message.tool_plan) thinking.push(body.message.tool_plan);
  if (thinking.length > 0) message.reasoning = thinking.join('\n');
  const calls = body.message.tool_calls ?? [];
  if (calls.length > 0) message.tool_calls = calls.map(toToolCall);
  if (message.content === null && calls.length === 0) message.content = '';
  const out: ChatResponse = {
    id: body.id || ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: toFinishReason(body.finish_reason) ?? 'stop' }],
  };
  const usage = toUsage(body.usage);
  if (usage) out.usage = usage;
  return out;
}
