// Legacy text completions (/v1/completions) in OpenAI's wire format, and their emulation over chat
// for providers without them (only when `client.compat.convert_text_to_chat` is on).
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ChatChunk, type ChatRequest, type ChatResponse, type ExtraFields, type FinishReason, type Usage } from './chat.ts';
import { invalidRequest } from './errors.ts';

export const TextRequestSchema = Type.Object(
  {
    ...GatewayFields,
    prompt: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1 }),
      Type.Array(Type.Integer(), { minItems: 1 }),
      Type.Array(Type.Array(Type.Integer()), { minItems: 1 }),
    ]),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(Type.Object({ include_usage: Type.Optional(Type.Boolean()) })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    n: Type.Optional(Type.Integer({ minimum: 1 })),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    seed: Type.Optional(Type.Integer()),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type TextRequest = Static<typeof TextRequestSchema>;

export interface TextChoice {
  index: number;
  text: string;
  finish_reason: FinishReason | null;
  logprobs: unknown;
}

export interface TextResponse {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: TextChoice[];
  usage?: Usage | null;
  extra_fields?: ExtraFields;
}

export function textToChat(req: TextRequest): ChatRequest {
  const prompt = Array.isArray(req.prompt) && req.prompt.length === 1 ? req.prompt[0] : req.prompt;
  if (typeof prompt !== 'string') {
    throw invalidRequest('a text completion emulated over chat takes one string prompt', 'prompt');
  }
  const chat: ChatRequest = { model: req.model, messages: [{ role: 'user', content: prompt }] };
  for (const k of ['max_tokens', 'temperature', 'top_p', 'n', 'stop', 'seed', 'user', 'stream', 'stream_options'] as const) {
    if (req[k] !== undefined) (chat as Record<string, unknown>)[k] = req[k];
  }
  return chat;
}

export function chatToText(res: ChatResponse): TextResponse {
  return {
    id: res.id,
    object: 'text_completion',
    created: res.created,
    model: res.model,
    choices: res.choices.map((c) => ({ index: c.index, text: c.message.content ?? '', finish_reason: c.finish_reason, logprobs: null })),
    ...(res.usage ? { usage: res.usage } : {}),
  };
}

export function chatChunkToText(chunk: ChatChunk): TextResponse {
  return {
    id: chunk.id,
    object: 'text_completion',
    created: chunk.created,
    model: chunk.model,
    choices: chunk.choices.map((c) => ({ index: c.index, text: c.delta.content ?? '', finish_reason: c.finish_reason, logprobs: null })),
    ...(chunk.usage ? { usage: chunk.usage } : {}),
  };
}
