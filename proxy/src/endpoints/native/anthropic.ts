// /anthropic/v1/messages: Anthropic's own API in front of every provider. The native request is
// read into the unified one, runs the same pipeline, and the answer, stream and errors go back in
// Anthropic's shapes, so the official SDK works unchanged but for its base URL.
import { randomUUID } from 'node:crypto';
import type { ChatRequest, Usage } from '../../unified/chat.ts';
import { invalidRequest } from '../../unified/errors.ts';
import { fromAnthropicRequest } from '../../providers/anthropic/native/request.ts';
import { toAnthropicMessage } from '../../providers/anthropic/native/response.ts';
import { createAnthropicStreamEncoder, encodeAnthropicEvent } from '../../providers/anthropic/native/stream.ts';
import { toAnthropicError } from '../../providers/anthropic/native/error.ts';
import type { AnthropicMessage } from '../../providers/anthropic/types.ts';
import type { AnthropicNativeRequest } from '../../providers/anthropic/native/request.ts';
import { nativeChat } from './native-chat.ts';
import { modelList } from '../models.ts';
import { encodedStreamPlan } from '../../operations/chunk-stream-plan.ts';

function parseMessagesRequest(body: unknown): ChatRequest {
  const b = body as Partial<AnthropicNativeRequest> | null;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw invalidRequest('request body must be a JSON object');
  if (typeof b.model !== 'string' || !b.model) throw invalidRequest('model: Field required', 'model');
  if (!Array.isArray(b.messages)) throw invalidRequest('messages: Field required', 'messages');
  if (typeof b.max_tokens !== 'number') throw invalidRequest('max_tokens: Field required', 'max_tokens');
  return fromAnthropicRequest(b as AnthropicNativeRequest);
}

export function anthropicUsage(u: unknown): Usage | undefined {
  const v = u as AnthropicMessage['usage'] | undefined;
  if (typeof v?.input_tokens !== 'number') return undefined;
  const input = v.input_tokens + (v.cache_read_input_tokens ?? 0) + (v.cache_creation_input_tokens ?? 0);
  return { prompt_tokens: input, completion_tokens: v.output_tokens, total_tokens: input + v.output_tokens };
}

export const anthropicMessages = nativeChat<AnthropicMessage>({
  parse: parseMessagesRequest,
  errorBody: toAnthropicError,
  usage: anthropicUsage,
  answer: (res, req) => toAnthropicMessage(res, req.model),
  stream: (chunks, req) => {
    const encoder = createAnthropicStreamEncoder(req.model, `msg_${randomUUID().replace(/-/g, '')}`);
    return encodedStreamPlan(chunks, encoder, encodeAnthropicEvent, (err) => encoder.fail(err).map(encodeAnthropicEvent).join(''));
  },
});

/** GET /anthropic/v1/models: every provider's models in Anthropic's list shape (ids are `provider/model`). */
export const anthropicModels = modelList(
  (models) => {
    const data = models.map((m) => ({
      type: 'model',
      id: m.id,
      display_name: m.name ?? m.id,
      created_at: new Date((m.created ?? 0) * 1000).toISOString(),
    }));
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  },
  { paged: false, renderError: toAnthropicError },
);
