// Unified answers -> native Cohere v2 answers, for clients of /cohere/v2/{chat,embed,rerank}. The
// inverse of ../response.ts, ../embeddings.ts and ../rerank.ts: the forward translators read
// these back to the same text, reasoning, tool calls, vectors, scores and token counts.
import type { ChatResponse, FinishReason, Usage } from '../../../unified/chat.ts';
import type { EmbeddingResponse } from '../../../unified/embeddings.ts';
import type { RerankResponse } from '../../../unified/rerank.ts';
import type { CohereChatResponse, CohereEmbedResponse, CohereFinishReason, CohereRerankResponse, CohereToolCall, CohereUsage } from '../types.ts';

const FINISH_REASONS: Record<string, CohereFinishReason> = {
  stop: 'COMPLETE',
  length: 'MAX_TOKENS',
  tool_calls: 'TOOL_CALL',
  function_call: 'TOOL_CALL',
  // Cohere has no filtered reason; ERROR would make clients discard the text they got.
  content_filter: 'COMPLETE',
};

/** Cohere clients run tools when finish_reason is TOOL_CALL, so a turn that called tools says so. */
export function toCohereFinishReason(finish: FinishReason | null | undefined, hasToolCalls: boolean): CohereFinishReason {
  const reason = (finish ? FINISH_REASONS[finish] : undefined) ?? 'COMPLETE';
  return reason === 'COMPLETE' && hasToolCalls ? 'TOOL_CALL' : reason;
}

/** Token counts as both billed units and model tokens (the gateway knows one count). */
export function toCohereUsage(u: Usage | null | undefined): CohereUsage {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  const usage: CohereUsage = { billed_units: { input_tokens: input, output_tokens: output }, tokens: { input_tokens: input, output_tokens: output } };
  const cached = u?.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number' && cached > 0) usage.cached_tokens = cached;
  return usage;
}

export function toCohereToolCall(call: { id: string; function: { name: string; arguments: string } }): CohereToolCall {
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments || '{}' } };
}

/**
 * Reasoning before tool calls is Cohere's tool plan; reasoning before an answer is thinking
 * content (what Cohere's reasoning models send).
 */
export function toCohereChatResponse(res: ChatResponse): CohereChatResponse {
  const choice = res.choices.find((c) => c.index === 0) ?? res.choices[0];
  const msg = choice?.message;
  const calls = msg?.tool_calls ?? [];
  const message: CohereChatResponse['message'] = { role: 'assistant' };
  const content: NonNullable<CohereChatResponse['message']['content']> = [];
  if (msg?.reasoning && calls.length === 0) content.push({ type: 'thinking', thinking: msg.reasoning });
  const text = [msg?.content, msg?.refusal].filter((t): t is string => typeof t === 'string' && t !== '').join('');
  if (text || calls.length === 0) content.push({ type: 'text', text });
  if (content.length > 0) message.content = content;
  if (calls.length > 0) {
    if (msg?.reasoning) message.tool_plan = msg.reasoning;
    message.tool_calls = calls.map(toCohereToolCall);
  }
  return {
    id: res.id,
    finish_reason: toCohereFinishReason(choice?.finish_reason, calls.length > 0),
    message,
    usage: toCohereUsage(res.usage),
  };
}

/** Float vectors, in input order (OpenAI's base64 form decoded). */
export function toCohereEmbedResponse(res: EmbeddingResponse, texts: string[], id: string): CohereEmbedResponse {
  const float = [...res.data].sort((a, b) => a.index - b.index).map((d) => vectorOf(d.embedding));
  return {
    id,
    response_type: 'embeddings_by_type',
    embeddings: { float },
    texts,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: res.usage?.prompt_tokens ?? 0 } },
  };
}

export function toCohereRerankResponse(res: RerankResponse, id: string): CohereRerankResponse {
  const meta: NonNullable<CohereRerankResponse['meta']> = { api_version: { version: '2' } };
  const billed: NonNullable<NonNullable<CohereRerankResponse['meta']>['billed_units']> = {};
  if (typeof res.usage?.search_units === 'number') billed.search_units = res.usage.search_units;
  if (res.usage?.prompt_tokens) billed.input_tokens = res.usage.prompt_tokens;
  if (Object.keys(billed).length > 0) meta.billed_units = billed;
  return {
    id: res.id ?? id,
    results: res.results.map((r) => ({ index: r.index, relevance_score: r.relevance_score })),
    meta,
  };
}

function vectorOf(embedding: number[] | string): number[] {
  if (typeof embedding !== 'string') return embedding;
  const buf = Buffer.from(embedding, 'base64');
  const values: number[] = [];
  for (let offset = 0; offset + 4 <= buf.length; offset += 4) values.push(buf.readFloatLE(offset));
  return values;
}
