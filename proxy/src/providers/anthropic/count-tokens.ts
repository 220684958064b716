// Token counting on Anthropic (`POST /v1/messages/count_tokens`): the Messages request the chat
// translator builds, minus what only shapes generation (the endpoint refuses those fields).
import type { ChatRequest } from '../../unified/chat.ts';
import { readTokenCount, type TokenCount } from '../../unified/count-tokens.ts';
import type { UpstreamRequest } from '../adapter.ts';
import { toAnthropicRequest } from './request.ts';

const COUNTED = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking'] as const;

export function toAnthropicCountTokensRequest(req: ChatRequest, model: string): UpstreamRequest {
  const full = toAnthropicRequest(req, model) as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  for (const k of COUNTED) if (full[k] !== undefined) body[k] = full[k];
  return { method: 'POST', path: '/messages/count_tokens', requestType: 'count_tokens', body, stream: false };
}

export function fromAnthropicCountTokens(body: unknown): TokenCount {
  return { input_tokens: readTokenCount((body as { input_tokens?: unknown } | null)?.input_tokens) };
}
