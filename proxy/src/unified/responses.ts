// OpenAI Responses API shapes (`/v1/responses`). The request is a TypeBox schema (validated at the
// edge); the response object and stream events are plain interfaces because the gateway only
// produces them. Field names and nullability follow the OpenAI wire format so the official SDKs
// parse what the bridge emits.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { GatewayFields, ReasoningEffortSchema } from './chat.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

// ---- request: input content parts -------------------------------------------------------------

const InputTextPart = Type.Object(
  { type: Type.Literal('input_text'), text: Type.String() },
  { additionalProperties: true },
);
/** Assistant history replayed from an earlier response. */
const OutputTextPart = Type.Object(
  { type: Type.Literal('output_text'), text: Type.String(), annotations: Type.Optional(Type.Array(Type.Unknown())) },
  { additionalProperties: true },
);
const RefusalPart = Type.Object(
  { type: Type.Literal('refusal'), refusal: Type.String() },
  { additionalProperties: true },
);
const InputImagePart = Type.Object(
  {
    type: Type.Literal('input_image'),
    image_url: Type.Optional(Nullable(Type.String())),
    file_id: Type.Optional(Nullable(Type.String())),
    detail: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
const InputFilePart = Type.Object(
  {
    type: Type.Literal('input_file'),
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Nullable(Type.String())),
    file_url: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
const InputAudioPart = Type.Object(
  {
    type: Type.Literal('input_audio'),
    input_audio: Type.Object({ data: Type.String(), format: Type.String() }),
  },
  { additionalProperties: true },
);
export const ResponsesInputPartSchema = Type.Union([
  InputTextPart,
  OutputTextPart,
  RefusalPart,
  InputImagePart,
  InputFilePart,
  InputAudioPart,
]);

// ---- request: input items ---------------------------------------------------------------------

const ItemStatusSchema = Type.Union([
  Type.Literal('in_progress'),
  Type.Literal('completed'),
  Type.Literal('incomplete'),
]);

/** Both the "easy" message (`type` omitted) and a replayed output message. */
const MessageItem = Type.Object(
  {
    type: Type.Optional(Type.Literal('message')),
    id: Type.Optional(Type.String()),
    role: Type.Union([
      Type.Literal('user'),
      Type.Literal('system'),
      Type.Literal('developer'),
      Type.Literal('assistant'),
    ]),
    content: Type.Union([Type.String(), Type.Array(ResponsesInputPartSchema)]),
    status: Type.Optional(ItemStatusSchema),
  },
  { additionalProperties: true },
);
const FunctionCallItem = Type.Object(
  {
    type: Type.Literal('function_call'),
    id: Type.Optional(Type.String()),
    call_id: Type.String({ minLength: 1 }),
    name: Type.String({ minLength: 1 }),
    arguments: Type.String(),
    status: Type.Optional(ItemStatusSchema),
  },
  { additionalProperties: true },
);
const FunctionCallOutputItem = Type.Object(
  {
    type: Type.Literal('function_call_output'),
    id: Type.Optional(Nullable(Type.String())),
    call_id: Type.String({ minLength: 1 }),
    output: Type.Union([Type.String(), Type.Array(ResponsesInputPartSchema)]),
    status: Type.Optional(Nullable(ItemStatusSchema)),
  },
  { additionalProperties: true },
);
const ReasoningItem = Type.Object(
  {
    type: Type.Literal('reasoning'),
    id: Type.Optional(Type.String()),
    summary: Type.Optional(
      Type.Array(Type.Object({ type: Type.Literal('summary_text'), text: Type.String() })),
    ),
    encrypted_content: Type.Optional(Nullable(Type.String())),
    content: Type.Optional(Type.Array(Type.Unknown())),
    status: Type.Optional(ItemStatusSchema),
  },
  { additionalProperties: true },
);
/**
 * Only the items a chat-completions provider can replay. Hosted-tool calls and `item_reference`
 * need OpenAI's server-side state and are rejected by validation.
 */
export const ResponsesInputItemSchema = Type.Union([
  MessageItem,
  FunctionCallItem,
  FunctionCallOutputItem,
  ReasoningItem,
]);

// ---- request: tools and options ---------------------------------------------------------------

/**
 * Loose on purpose: hosted tools (web_search, file_search, mcp…) must pass validation so the bridge
 * can reject them with a message naming `tools[i].type`.
 */
export const ResponsesToolSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    name: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.Optional(Nullable(Type.String())),
    parameters: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    strict: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: true },
);

/** 'none' | 'auto' | 'required', `{type:'function', name}`, `{type:'allowed_tools', mode, tools}`, or a hosted tool. */
export const ResponsesToolChoiceSchema = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object(
    {
      type: Type.String({ minLength: 1 }),
      name: Type.Optional(Type.String({ minLength: 1 })),
      mode: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('required')])),
      tools: Type.Optional(
        Type.Array(Type.Object({ type: Type.String(), name: Type.Optional(Type.String()) }, { additionalProperties: true })),
      ),
    },
    { additionalProperties: true },
  ),
]);

export const ResponsesTextFormatSchema = Type.Union([
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    name: Type.String({ minLength: 1 }),
    schema: Type.Record(Type.String(), Type.Unknown()),
    description: Type.Optional(Type.String()),
    strict: Type.Optional(Nullable(Type.Boolean())),
  }),
]);

export const ResponsesTextConfigSchema = Type.Object(
  {
    format: Type.Optional(ResponsesTextFormatSchema),
    verbosity: Type.Optional(Nullable(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]))),
  },
  { additionalProperties: true },
);

export const ResponsesReasoningConfigSchema = Type.Object(
  {
    effort: Type.Optional(Nullable(ReasoningEffortSchema)),
    summary: Type.Optional(
      Nullable(Type.Union([Type.Literal('auto'), Type.Literal('concise'), Type.Literal('detailed')])),
    ),
  },
  { additionalProperties: true },
);

export const ResponsesRequestSchema = Type.Object(
  {
    ...GatewayFields,
    input: Type.Union([Type.String(), Type.Array(ResponsesInputItemSchema, { minItems: 1 })]),
    instructions: Type.Optional(Nullable(Type.String())),
    stream: Type.Optional(Nullable(Type.Boolean())),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    tools: Type.Optional(Type.Array(ResponsesToolSchema)),
    tool_choice: Type.Optional(ResponsesToolChoiceSchema),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
    reasoning: Type.Optional(Nullable(ResponsesReasoningConfigSchema)),
    text: Type.Optional(ResponsesTextConfigSchema),
    /** e.g. 'reasoning.encrypted_content'. */
    include: Type.Optional(Nullable(Type.Array(Type.String()))),
    store: Type.Optional(Nullable(Type.Boolean())),
    previous_response_id: Type.Optional(Nullable(Type.String())),
    background: Type.Optional(Nullable(Type.Boolean())),
    /** Server-side conversations and stored prompts: declared only so the bridge can refuse them. */
    conversation: Type.Optional(Type.Unknown()),
    prompt: Type.Optional(Type.Unknown()),
    metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export type ResponsesInputPart = Static<typeof ResponsesInputPartSchema>;
export type ResponsesInputItem = Static<typeof ResponsesInputItemSchema>;
export type ResponsesTool = Static<typeof ResponsesToolSchema>;
export type ResponsesToolChoice = Static<typeof ResponsesToolChoiceSchema>;
export type ResponsesTextConfig = Static<typeof ResponsesTextConfigSchema>;
export type ResponsesReasoningConfig = Static<typeof ResponsesReasoningConfigSchema>;
export type ResponsesRequest = Static<typeof ResponsesRequestSchema>;

// ---- response object --------------------------------------------------------------------------

export type ResponsesItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  /** Always empty: chat providers report no citations in this shape. */
  annotations: Record<string, unknown>[];
}

export interface ResponsesOutputRefusal {
  type: 'refusal';
  refusal: string;
}

export type ResponsesOutputContent = ResponsesOutputText | ResponsesOutputRefusal;

export interface ResponsesMessageItem {
  id: string;
  type: 'message';
  status: ResponsesItemStatus;
  role: 'assistant';
  content: ResponsesOutputContent[];
}

export interface ResponsesFunctionCallItem {
  id: string;
  type: 'function_call';
  status: ResponsesItemStatus;
  call_id: string;
  name: string;
  arguments: string;
}

export interface ResponsesSummaryText {
  type: 'summary_text';
  text: string;
}

export interface ResponsesReasoningItem {
  id: string;
  type: 'reasoning';
  summary: ResponsesSummaryText[];
  /** Only when the request's `include` asks for 'reasoning.encrypted_content'. */
  encrypted_content?: string;
}

export type ResponsesOutputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesReasoningItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponsesStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponsesObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponsesStatus;
  background: boolean;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number | null;
  text: ResponsesTextConfig;
  tool_choice: ResponsesToolChoice;
  tools: ResponsesTool[];
  top_p: number | null;
  truncation: 'disabled';
  usage: ResponsesUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

// ---- stream events ----------------------------------------------------------------------------

interface EventBase {
  sequence_number: number;
}

export interface ResponsesLifecycleEvent extends EventBase {
  type:
    | 'response.created'
    | 'response.in_progress'
    | 'response.completed'
    | 'response.incomplete'
    | 'response.failed';
  response: ResponsesObject;
}

export interface ResponsesOutputItemEvent extends EventBase {
  type: 'response.output_item.added' | 'response.output_item.done';
  output_index: number;
  item: ResponsesOutputItem;
}

export interface ResponsesContentPartEvent extends EventBase {
  type: 'response.content_part.added' | 'response.content_part.done';
  item_id: string;
  output_index: number;
  content_index: number;
  part: ResponsesOutputContent;
}

export interface ResponsesOutputTextDeltaEvent extends EventBase {
  type: 'response.output_text.delta';
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
  logprobs: unknown[];
}

export interface ResponsesOutputTextDoneEvent extends EventBase {
  type: 'response.output_text.done';
  item_id: string;
  output_index: number;
  content_index: number;
  text: string;
  logprobs: unknown[];
}

export interface ResponsesRefusalDeltaEvent extends EventBase {
  type: 'response.refusal.delta';
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
}

export interface ResponsesRefusalDoneEvent extends EventBase {
  type: 'response.refusal.done';
  item_id: string;
  output_index: number;
  content_index: number;
  refusal: string;
}

export interface ResponsesFunctionCallArgumentsDeltaEvent extends EventBase {
  type: 'response.function_call_arguments.delta';
  item_id: string;
  output_index: number;
  delta: string;
}

export interface ResponsesFunctionCallArgumentsDoneEvent extends EventBase {
  type: 'response.function_call_arguments.done';
  item_id: string;
  output_index: number;
  arguments: string;
}

export interface ResponsesReasoningSummaryPartEvent extends EventBase {
  type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
  item_id: string;
  output_index: number;
  summary_index: number;
  part: ResponsesSummaryText;
}

export interface ResponsesReasoningSummaryTextDeltaEvent extends EventBase {
  type: 'response.reasoning_summary_text.delta';
  item_id: string;
  output_index: number;
  summary_index: number;
  delta: string;
}

export interface ResponsesReasoningSummaryTextDoneEvent extends EventBase {
  type: 'response.reasoning_summary_text.done';
  item_id: string;
  output_index: number;
  summary_index: number;
  text: string;
}

export interface ResponsesErrorEvent extends EventBase {
  type: 'error';
  code: string | null;
  message: string;
  param: string | null;
}

export type ResponsesStreamEvent =
  | ResponsesLifecycleEvent
  | ResponsesOutputItemEvent
  | ResponsesContentPartEvent
  | ResponsesOutputTextDeltaEvent
  | ResponsesOutputTextDoneEvent
  | ResponsesRefusalDeltaEvent
  | ResponsesRefusalDoneEvent
  | ResponsesFunctionCallArgumentsDeltaEvent
  | ResponsesFunctionCallArgumentsDoneEvent
  | ResponsesReasoningSummaryPartEvent
  | ResponsesReasoningSummaryTextDeltaEvent
  | ResponsesReasoningSummaryTextDoneEvent
  | ResponsesErrorEvent;
