// Unified chat completion -> native Anthropic Message, for clients of /anthropic/v1/messages.
// The inverse of ../response.ts: fromAnthropicResponse(toAnthropicMessage(r)) keeps r's content,
// reasoning, tool calls and token counts. The helpers are shared with the stream encoder.
import type { ChatResponse, FinishReason, ReasoningDetail, Usage } from '../../../unified/chat.ts';
import { encodeReasoningDetails } from '../../../unified/responses-bridge/reasoning-codec.ts';
import { mergeReasoningDetails } from '../../../unified/responses-bridge/stream.ts';
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicRedactedThinkingBlock,
  AnthropicStopReason,
  AnthropicThinkingBlock,
  AnthropicUsage,
} from '../types.ts';

/** Unified finish reason -> Anthropic stop reason (../response.ts maps each back to its key). */
export const STOP_REASONS: Record<string, AnthropicStopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/**
 * Anthropic clients run tools when stop_reason is tool_use, so a turn that called tools says so
 * even when the provider reported a plain stop (or nothing).
 */
export function toStopReason(finish: FinishReason | null | undefined, hasToolUse: boolean): AnthropicStopReason {
  const reason = (finish ? STOP_REASONS[finish] : undefined) ?? 'end_turn';
  return reason === 'end_turn' && hasToolUse ? 'tool_use' : reason;
}

/**
 * Unified usage -> Anthropic's: cached prompt tokens are reported apart from input_tokens. Cache
 * writes are not distinguishable in unified usage, so they count as input.
 */
export function toAnthropicUsage(u: Usage | null | undefined): AnthropicUsage {
  const prompt = u?.prompt_tokens ?? 0;
  const cached = Math.min(u?.prompt_tokens_details?.cached_tokens ?? 0, prompt);
  return {
    input_tokens: prompt - cached,
    output_tokens: u?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/** Anthropic message ids start with `msg_`; other providers' ids get the prefix. */
export function anthropicMessageId(id: string): string {
  if (id.startsWith('msg_')) return id;
  return `msg_${id.replace(/^chatcmpl-/, '') || 'gateway'}`;
}

/**
 * Data of the redacted_thinking block standing for an encrypted detail. Details tied to an id (a
 * Gemini-signed tool call, an OpenAI reasoning item) are wrapped whole so the id survives the
 * client's replay; fromAnthropicRequest unwraps them.
 */
export function redactedData(d: ReasoningDetail): string {
  return d.id !== undefined ? encodeReasoningDetails([d]) : (d.data ?? '');
}

/**
 * reasoning_details (merged by index) -> thinking / redacted_thinking blocks, signatures kept.
 * Reasoning text without details (providers that only send `reasoning`) becomes an unsigned block.
 */
export function reasoningBlocks(
  reasoning: string | undefined,
  details: ReasoningDetail[] | undefined,
): Array<AnthropicThinkingBlock | AnthropicRedactedThinkingBlock> {
  const merged = mergeReasoningDetails([], details ?? []);
  const textCount = merged.filter((d) => d.type === 'reasoning.text').length;
  const blocks: Array<AnthropicThinkingBlock | AnthropicRedactedThinkingBlock> = [];
  let hasText = false;
  for (const d of merged) {
    if (d.type === 'reasoning.text') {
      // A detail carrying only the signature goes with the message's reasoning text.
      const thinking = d.text ?? (textCount === 1 ? (reasoning ?? '') : '');
      if (!thinking && !d.signature) continue;
      hasText ||= thinking !== '';
      blocks.push({ type: 'thinking', thinking, signature: d.signature ?? '' });
    } else if (d.type === 'reasoning.summary') {
      if (!d.summary) continue;
      hasText = true;
      blocks.push({ type: 'thinking', thinking: d.summary, signature: '' });
    } else if (d.data || d.id !== undefined) {
      blocks.push({ type: 'redacted_thinking', data: redactedData(d) });
    }
  }
  if (!hasText && reasoning) blocks.unshift({ type: 'thinking', thinking: reasoning, signature: '' });
  return blocks;
}

/** Tool arguments as the object Anthropic's `input` must be; unparseable text becomes `{}`. */
export function parseToolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return {};
}

export function toAnthropicMessage(res: ChatResponse, model: string): AnthropicMessage {
  const choice = res.choices.find((c) => c.index === 0) ?? res.choices[0];
  const msg = choice?.message;
  const content: AnthropicContentBlock[] = [...reasoningBlocks(msg?.reasoning, msg?.reasoning_details)];
  if (msg?.content) content.push({ type: 'text', text: msg.content });
  if (msg?.refusal) content.push({ type: 'text', text: msg.refusal });
  for (const call of msg?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseToolInput(call.function.arguments) });
  }
  return {
    id: anthropicMessageId(res.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: toStopReason(choice?.finish_reason, (msg?.tool_calls?.length ?? 0) > 0),
    stop_sequence: null,
    usage: toAnthropicUsage(res.usage),
  };
}
