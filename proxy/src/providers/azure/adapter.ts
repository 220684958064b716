// Azure OpenAI: OpenAI's wire format on Azure's URLs. Bodies, answers and errors are OpenAI's (the
// OpenAI translators are reused); only paths, api-version and authentication differ, and those
// depend on the key (its resource, deployments and auth type), so `sign` settles them per attempt.
import type { FormatAdapter } from '../adapter.ts';
import { openaiAdapter, toOpenAIChatRequest, toOpenAITextRequest, toUpstreamBody } from '../openai/adapter.ts';
import { deploymentOp } from './paths.ts';
import { signAzure } from './sign.ts';
import { createAzureStreamTranslator } from './stream.ts';
import { azureVideo } from './video.ts';
import { toAzureOcrRequest } from './ocr.ts';

export const azureAdapter: FormatAdapter = {
  // Used as is only by passthrough (which has no per-key shaping); `sign` replaces it otherwise.
  authHeaders: (key): Record<string, string> => (key ? { 'api-key': key } : {}),
  sign: signAzure,
  chatRequest: (req, model, stream) => ({
    method: 'POST',
    path: deploymentOp(model, '/chat/completions'),
    requestType: 'chat_completion',
    body: toOpenAIChatRequest(req, model, stream),
    stream,
  }),
  chatResponse: openaiAdapter.chatResponse,
  chatStream: createAzureStreamTranslator,
  textRequest: (req, model, stream) => ({
    method: 'POST',
    path: deploymentOp(model, '/completions'),
    requestType: 'text_completion',
    body: toOpenAITextRequest(req, model, stream),
    stream,
  }),
  embeddingsRequest: (req, model) => ({
    method: 'POST',
    path: deploymentOp(model, '/embeddings'),
    requestType: 'embedding',
    body: toUpstreamBody(req, model),
    stream: false,
  }),
  embeddingsResponse: openaiAdapter.embeddingsResponse,
  video: azureVideo,
  ocrRequest: toAzureOcrRequest,
  modelsRequest: () => ({ method: 'GET', path: '/models', requestType: 'list_models', stream: false }),
  modelsResponse: openaiAdapter.modelsResponse,
  error: openaiAdapter.error,
};
