// Anthropic's native wire shapes (Messages API, streaming events, errors, models list), limited to
// the fields the gateway reads or writes. Upstream may add fields and block types at any time, so
// response-side unions keep an open `{ type: string }` member where unknown kinds must be skipped.

// ---- Request -------------------------------------------------------------------------------

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

export type AnthropicImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

export interface AnthropicBase64ImageSource {
  type: 'base64';
  media_type: AnthropicImageMediaType;
  data: string;
}

export interface AnthropicUrlSource {
  type: 'url';
  url: string;
}

export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicBase64ImageSource | AnthropicUrlSource;
}

export interface AnthropicDocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: 'application/pdf'; data: string } | AnthropicUrlSource;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** Always a JSON object on the wire. */
  input: Record<string, unknown>;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
}

/** Blocks the gateway sends inside `messages[].content`. */
export type AnthropicContentBlockParam =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock;

export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: string | AnthropicContentBlockParam[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type AnthropicThinkingConfig = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };

export interface AnthropicMessagesRequest {
  model: string;
  messages: AnthropicMessageParam[];
  /** Required by Anthropic; counts thinking tokens too. */
  max_tokens: number;
  system?: AnthropicTextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id?: string };
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinkingConfig;
  stream?: boolean;
}

// ---- Response ------------------------------------------------------------------------------

export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'
  | (string & {});

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A block type the gateway does not translate (server tools, future kinds). */
export interface AnthropicOtherBlock {
  type: string;
}

/** Blocks Anthropic returns in `content`. */
export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicOtherBlock;

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

// ---- Streaming -----------------------------------------------------------------------------

/** message_delta usage: cumulative counts; input/cache counts may be present (null when unknown). */
export interface AnthropicDeltaUsage {
  output_tokens: number;
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export type AnthropicContentDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'citations_delta'; citation: unknown };

export interface AnthropicErrorObject {
  type: string;
  message: string;
}

export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta: AnthropicContentDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null };
      usage: AnthropicDeltaUsage;
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: AnthropicErrorObject };

// ---- Errors and models ---------------------------------------------------------------------

export interface AnthropicErrorBody {
  type: 'error';
  error: AnthropicErrorObject;
  request_id?: string | null;
}

export interface AnthropicModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  /** RFC 3339 timestamp. */
  created_at: string;
  max_input_tokens?: number | null;
  max_tokens?: number | null;
}

export interface AnthropicModelList {
  data: AnthropicModelInfo[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}
