// Anthropic Message -> unified chat completion.
import type { AssistantMessage, ChatResponse, FinishReason, ReasoningDetail, ToolCall, Usage } from '../../unified/chat.ts';
import { objectList } from '../../unified/answer-shape.ts';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicStopReason } from './types.ts';

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // pause_turn: a server tool paused a long turn; the client sees an ordinary stop.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function toFinishReason(reason: AnthropicStopReason | null | undefined): FinishReason | null {
  if (reason === null || reason === undefined) return null;
  return FINISH_REASONS[reason] ?? 'stop';
}

/** Anthropic reports cache reads and writes apart from input_tokens; the prompt is all three. */
export function toUsage(u: {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}): Usage {
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const prompt = (u.input_tokens ?? 0) + cacheRead + (u.cache_creation_input_tokens ?? 0);
  const completion = u.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
}

export function fromAnthropicResponse(msg: AnthropicMessage, created: number): ChatResponse {
  objectList(msg, 'content');
  const texts: string[] = [];
  const thoughts: string[] = [];
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of msg.content) {
    if (isBlock(block, 'text')) texts.push(block.text);
    else if (isBlock(block, 'thinking')) {
      thoughts.push(block.thinking);
      details.push({ type: 'reasoning.text', text: block.thinking, signature: block.signature, index: details.length });
    } else if (isBlock(block, 'redacted_thinking')) {
      details.push({ type: 'reasoning.encrypted', data: block.data, index: details.length });
    } else if (isBlock(block, 'tool_use')) {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
    // Server-tool blocks (web search etc.) have no unified equivalent and are left out.
  }

  const message: AssistantMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (thoughts.length > 0) message.reasoning = thoughts.join('');
  if (details.length > 0) message.reasoning_details = details;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;

  return {
    id: msg.id,
    object: 'chat.completion',
    created,
    model: msg.model,
    choices: [{ index: 0, message, finish_reason: toFinishReason(msg.stop_reason) }],
    usage: toUsage(msg.usage),
  };
}

type BlockOf<T extends string> = Extract<AnthropicContentBlock, { type: T }>;

/** Narrows a content block by its `type` (the union has an open member for unknown kinds). */
export function isBlock<T extends 'text' | 'thinking' | 'redacted_thinking' | 'tool_use'>(
  block: AnthropicContentBlock,
  type: T,
): block is BlockOf<T> {
  return block.type === type;
}
