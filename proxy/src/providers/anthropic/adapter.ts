import type { FormatAdapter } from '../adapter.ts';
import { toAnthropicRequest } from './request.ts';
import { fromAnthropicResponse } from './response.ts';
import { createAnthropicStreamTranslator } from './stream.ts';
import { fromAnthropicError } from './error.ts';
import { fromAnthropicModels } from './models.ts';
import { fromAnthropicCountTokens, toAnthropicCountTokensRequest } from './count-tokens.ts';
import type { AnthropicMessage } from './types.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropicAdapter: FormatAdapter = {
  authHeaders: (key) => ({ 'anthropic-version': ANTHROPIC_VERSION, ...(key ? { 'x-api-key': key } : {}) }),
  chatRequest: (req, model, stream) => {
    const body = toAnthropicRequest(req, model);
    if (stream) body.stream = true;
    else delete body.stream;
    return { method: 'POST', path: '/messages', requestType: 'chat_completion', body, stream };
  },
  chatResponse: (body, ctx) => fromAnthropicResponse(body as AnthropicMessage, ctx.created),
  chatStream: (ctx) => createAnthropicStreamTranslator(ctx),
  modelsRequest: (pageToken) => ({
    method: 'GET',
    path: `/models?limit=1000${pageToken ? `&after_id=${encodeURIComponent(pageToken)}` : ''}`,
    requestType: 'list_models',
    stream: false,
  }),
  modelsResponse: fromAnthropicModels,
  countTokensRequest: toAnthropicCountTokensRequest,
  countTokensResponse: fromAnthropicCountTokens,
  error: fromAnthropicError,
};
