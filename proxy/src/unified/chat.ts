// Unified chat completion shapes. The unified API speaks the OpenAI chat wire format (plus the
// gateway's extensions: `fallbacks`, `reasoning`, `extra_fields`), so these types are both the
// public contract of /v1/chat/completions and the pivot every provider translator maps to and from.
import { Type, type Static } from '@sinclair/typebox';

const ImagePart = Type.Object({
  type: Type.Literal('image_url'),
  image_url: Type.Object({ url: Type.String({ minLength: 1 }), detail: Type.Optional(Type.String()) }),
});
const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const AudioPart = Type.Object({
  type: Type.Literal('input_audio'),
  input_audio: Type.Object({ data: Type.String(), format: Type.String() }),
});
const FilePart = Type.Object({
  type: Type.Literal('file'),
  file: Type.Object({
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
  }),
});
export const ContentPartSchema = Type.Union([TextPart, ImagePart, AudioPart, FilePart]);

export const ReasoningDetailSchema = Type.Object({
  id: Type.Optional(Type.String()),
  index: Type.Optional(Type.Integer()),
  type: Type.Union([
    Type.Literal('reasoning.summary'),
    Type.Literal('reasoning.encrypted'),
    Type.Literal('reasoning.text'),
  ]),
  summary: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  signature: Type.Optional(Type.String()),
  data: Type.Optional(Type.String()),
});

export const ToolCallSchema = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

export const MessageSchema = Type.Object(
  {
    role: Type.Union([
      Type.Literal('system'),
      Type.Literal('developer'),
      Type.Literal('user'),
      Type.Literal('assistant'),
      Type.Literal('tool'),
    ]),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(ContentPartSchema), Type.Null()])),
    name: Type.Optional(Type.String()),
    tool_call_id: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
    refusal: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    reasoning: Type.Optional(Type.String()),
    reasoning_details: Type.Optional(Type.Array(ReasoningDetailSchema)),
  },
  { additionalProperties: true },
);

export const ToolSchema = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    strict: Type.Optional(Type.Boolean()),
  }),
});

export const ToolChoiceSchema = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String() }) }),
]);

export const ReasoningEffortSchema = Type.Union([
  Type.Literal('none'),
  Type.Literal('minimal'),
  Type.Literal('low'),
  Type.Literal('medium'),
  Type.Literal('high'),
  Type.Literal('xhigh'),
]);

/** Fields every unified inference request may carry on top of its operation's own. */
export const GatewayFields = {
  model: Type.String({ minLength: 1 }),
  fallbacks: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
};

export const ChatRequestSchema = Type.Object(
  {
    ...GatewayFields,
    messages: Type.Array(MessageSchema, { minItems: 1 }),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(Type.Object({ include_usage: Type.Optional(Type.Boolean()) })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 })])),
    n: Type.Optional(Type.Integer({ minimum: 1 })),
    seed: Type.Optional(Type.Integer()),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    logprobs: Type.Optional(Type.Boolean()),
    top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
    user: Type.Optional(Type.String()),
    tools: Type.Optional(Type.Array(ToolSchema)),
    tool_choice: Type.Optional(ToolChoiceSchema),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    response_format: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** OpenAI's flat form. */
    reasoning_effort: Type.Optional(ReasoningEffortSchema),
    /** The gateway's form: effort for OpenAI-style models, max_tokens as a thinking budget. */
    reasoning: Type.Optional(
      Type.Object({ effort: Type.Optional(ReasoningEffortSchema), max_tokens: Type.Optional(Type.Integer({ minimum: 0 })) }),
    ),
  },
  { additionalProperties: true },
);

export type ContentPart = Static<typeof ContentPartSchema>;
export type ReasoningDetail = Static<typeof ReasoningDetailSchema>;
export type ToolCall = Static<typeof ToolCallSchema>;
export type Message = Static<typeof MessageSchema>;
export type Tool = Static<typeof ToolSchema>;
export type ToolChoice = Static<typeof ToolChoiceSchema>;
export type ReasoningEffort = Static<typeof ReasoningEffortSchema>;
export type ChatRequest = Static<typeof ChatRequestSchema>;

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number };
  /** Pages processed, for operations billed per page (OCR) rather than per token. */
  pages?: number;
  /** USD the provider itself reported for this answer (OpenRouter's `usage.cost`): the price charged, instead of the table's. */
  cost?: number;
}

/** Gateway metadata on every response and chunk. */
export interface ExtraFields {
  provider: string;
  request_type?: string;
  model_requested?: string;
  latency?: number;
  chunk_index?: number;
  raw_request?: unknown;
  raw_response?: unknown;
  cache_debug?: Record<string, unknown>;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | (string & {});

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
  reasoning?: string;
  reasoning_details?: ReasoningDetail[];
}

export interface ChatChoice {
  index: number;
  message: AssistantMessage;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Usage;
  system_fingerprint?: string;
  service_tier?: string;
  extra_fields?: ExtraFields;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  /** Always present, even when only `arguments` grows (the spec requires it). */
  function: { name?: string; arguments?: string };
}

export interface ChatDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  reasoning?: string;
  reasoning_details?: ReasoningDetail[];
  tool_calls?: ToolCallDelta[];
}

export interface ChatChunkChoice {
  index: number;
  delta: ChatDelta;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string;
  extra_fields?: ExtraFields;
}

/** `u` if it is a chat usage object (as read from an upstream body), else undefined. */
export function asUsage(u: unknown): Usage | undefined {
  const v = u as Usage | null | undefined;
  return v && typeof v.prompt_tokens === 'number' && typeof v.completion_tokens === 'number' ? v : undefined;
}
