import type { FormatAdapter } from '../adapter.ts';
import { unsupportedOperation } from '../../unified/errors.ts';
import { toBedrockRequest } from './request.ts';
import { fromBedrockResponse } from './response.ts';
import { createBedrockStreamTranslator, createEventStreamDecoder } from './stream.ts';
import { fromBedrockError } from './error.ts';
import { signBedrock } from './sign.ts';
import type { BedrockConverseResponse } from './types.ts';

/** Converse path for a model id (ids such as `anthropic.claude-3-5-sonnet-20240620-v1:0` or ARNs are encoded). */
export function conversePath(model: string, stream: boolean): string {
  return `/model/${encodeURIComponent(model)}/${stream ? 'converse-stream' : 'converse'}`;
}

export const bedrockAdapter: FormatAdapter = {
  // Authentication is per request (SigV4 over the exact request), done in `sign`.
  authHeaders: () => ({}),
  sign: signBedrock,
  chatRequest: (req, model, stream) => ({
    method: 'POST',
    path: conversePath(model, stream),
    requestType: stream ? 'chat_completion_stream' : 'chat_completion',
    body: toBedrockRequest(req),
    stream,
  }),
  chatResponse: (body, ctx) => fromBedrockResponse(body as BedrockConverseResponse, ctx),
  chatStream: (ctx) => createBedrockStreamTranslator(ctx),
  decodeStream: createEventStreamDecoder,
  // The model list lives on the `bedrock` control-plane API (not bedrock-runtime): not offered yet.
  modelsRequest: () => {
    throw unsupportedOperation('bedrock', 'list_models');
  },
  modelsResponse: () => {
    throw unsupportedOperation('bedrock', 'list_models');
  },
  error: fromBedrockError,
};
