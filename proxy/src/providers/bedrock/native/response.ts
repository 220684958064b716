// Unified chat completion -> native Bedrock Converse response, for clients of /bedrock. The
// inverse of ../response.ts: fromBedrockResponse(toBedrockConverseResponse(r)) keeps r's text,
// reasoning, tool calls, finish reason and token counts. The helpers are shared with the stream encoder.
import type { ChatResponse, FinishReason, ReasoningDetail, Usage } from '../../../unified/chat.ts';
import { mergeReasoningDetails } from '../../../unified/responses-bridge/stream.ts';
import type { BedrockContentBlock, BedrockConverseResponse, BedrockStopReason, BedrockUsage } from '../types.ts';

/** Unified finish reason -> Bedrock stop reason (../response.ts maps each back). */
const STOP_REASONS: Record<string, BedrockStopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filtered',
};

/** Clients run tools when stopReason is tool_use, so a turn that called tools says so. */
export function toStopReason(finish: FinishReason | null | undefined, hasToolUse: boolean): BedrockStopReason {
  const reason = (finish ? STOP_REASONS[finish] : undefined) ?? 'end_turn';
  return reason === 'end_turn' && hasToolUse ? 'tool_use' : reason;
}

/** Bedrock's inputTokens exclude cache reads, which are reported apart. */
export function toBedrockUsage(u: Usage | null | undefined): Required<Pick<BedrockUsage, 'inputTokens' | 'outputTokens' | 'totalTokens'>> & BedrockUsage {
  const prompt = u?.prompt_tokens ?? 0;
  const cached = Math.min(u?.prompt_tokens_details?.cached_tokens ?? 0, prompt);
  const output = u?.completion_tokens ?? 0;
  const usage: ReturnType<typeof toBedrockUsage> = { inputTokens: prompt - cached, outputTokens: output, totalTokens: prompt + output };
  if (cached > 0) usage.cacheReadInputTokens = cached;
  return usage;
}

/**
 * reasoning_details (merged by index) -> reasoningContent blocks, signatures kept. Reasoning text
 * without details (providers that only send `reasoning`) becomes one unsigned block.
 */
export function reasoningBlocks(reasoning: string | undefined, details: ReasoningDetail[] | undefined): BedrockContentBlock[] {
  const blocks: BedrockContentBlock[] = [];
  let hasText = false;
  const merged = mergeReasoningDetails([], details ?? []);
  const textCount = merged.filter((d) => d.type === 'reasoning.text').length;
  for (const d of merged) {
    if (d.type === 'reasoning.text') {
      const text = d.text ?? (textCount === 1 ? (reasoning ?? '') : '');
      if (!text && !d.signature) continue;
      hasText ||= text !== '';
      blocks.push({ reasoningContent: { reasoningText: d.signature ? { text, signature: d.signature } : { text } } });
    } else if (d.type === 'reasoning.summary') {
      if (!d.summary) continue;
      hasText = true;
      blocks.push({ reasoningContent: { reasoningText: { text: d.summary } } });
    } else if (d.data) {
      blocks.push({ reasoningContent: { redactedContent: d.data } });
    }
  }
  if (!hasText && reasoning) blocks.unshift({ reasoningContent: { reasoningText: { text: reasoning } } });
  return blocks;
}

/** Tool arguments as the JSON object Bedrock's `input` must be; unparseable text becomes `{}`. */
export function parseToolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return {};
}

export function toBedrockConverseResponse(res: ChatResponse, latencyMs: number): BedrockConverseResponse {
  const choice = res.choices.find((c) => c.index === 0) ?? res.choices[0];
  const msg = choice?.message;
  const content: BedrockContentBlock[] = reasoningBlocks(msg?.reasoning, msg?.reasoning_details);
  const text = [msg?.content, msg?.refusal].filter((t): t is string => typeof t === 'string' && t !== '').join('');
  if (text) content.push({ text });
  for (const call of msg?.tool_calls ?? []) {
    content.push({ toolUse: { toolUseId: call.id, name: call.function.name, input: parseToolInput(call.function.arguments) } });
  }
  // Bedrock never answers with an empty message; an empty reply is one empty text block.
  if (content.length === 0) content.push({ text: '' });
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: toStopReason(choice?.finish_reason, (msg?.tool_calls?.length ?? 0) > 0),
    usage: toBedrockUsage(res.usage),
    metrics: { latencyMs },
  };
}
