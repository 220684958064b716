// Cohere API v2 wire shapes (https://docs.cohere.com/v2/reference): only what the translators read
// or write. The API is snake_case on the wire.

export type CohereTextContent = { type: 'text'; text: string };
export type CohereImageContent = { type: 'image_url'; image_url: { url: string; detail?: string } };
export type CohereThinkingContent = { type: 'thinking'; thinking: string };
export type CohereUserContent = CohereTextContent | CohereImageContent;

export interface CohereToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type CohereMessage =
  | { role: 'system'; content: string | CohereTextContent[] }
  | { role: 'user'; content: string | CohereUserContent[] }
  | { role: 'assistant'; content?: string | (CohereTextContent | CohereThinkingContent)[]; tool_calls?: CohereToolCall[]; tool_plan?: string }
  | { role: 'tool'; tool_call_id: string; content: string | CohereTextContent[] };

export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export type CohereResponseFormat = { type: 'text' } | { type: 'json_object'; json_schema?: Record<string, unknown> };

export interface CohereThinking {
  type: 'enabled' | 'disabled';
  token_budget?: number;
}

export interface CohereChatRequest {
  model: string;
  messages: CohereMessage[];
  stream?: boolean;
  tools?: CohereTool[];
  tool_choice?: 'REQUIRED' | 'NONE';
  max_tokens?: number;
  temperature?: number;
  p?: number;
  k?: number;
  stop_sequences?: string[];
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  response_format?: CohereResponseFormat;
  thinking?: CohereThinking;
  logprobs?: boolean;
}

export type CohereFinishReason = 'COMPLETE' | 'STOP_SEQUENCE' | 'MAX_TOKENS' | 'TOOL_CALL' | 'ERROR' | 'TIMEOUT' | (string & {});

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number; search_units?: number; classifications?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

export interface CohereChatResponse {
  id: string;
  finish_reason: CohereFinishReason;
  message: {
    role: 'assistant';
    content?: (CohereTextContent | CohereThinkingContent | { type: string })[];
    tool_calls?: CohereToolCall[];
    tool_plan?: string;
    citations?: unknown[];
  };
  usage?: CohereUsage;
  logprobs?: unknown;
}

/** One `data:` payload of the v2 chat stream; `type` is also sent as the SSE `event:` name. */
export type CohereStreamEvent =
  | { type: 'message-start'; id?: string; delta?: { message?: { role?: string } } }
  | { type: 'content-start'; index?: number; delta?: { message?: { content?: { type?: string; text?: string; thinking?: string } } } }
  | { type: 'content-delta'; index?: number; delta?: { message?: { content?: { text?: string; thinking?: string } } } }
  | { type: 'content-end'; index?: number }
  | { type: 'tool-plan-delta'; delta?: { message?: { tool_plan?: string } } }
  | { type: 'tool-call-start'; index?: number; delta?: { message?: { tool_calls?: Partial<CohereToolCall> & { function?: { name?: string; arguments?: string } } } } }
  | { type: 'tool-call-delta'; index?: number; delta?: { message?: { tool_calls?: { function?: { arguments?: string } } } } }
  | { type: 'tool-call-end'; index?: number }
  | { type: 'message-end'; id?: string; delta?: { error?: string; finish_reason?: CohereFinishReason; usage?: CohereUsage } }
  | { type: 'citation-start' | 'citation-end' | 'debug' };

export type CohereEmbedInputType = 'search_document' | 'search_query' | 'classification' | 'clustering' | 'image';

export interface CohereEmbedRequest {
  model: string;
  texts: string[];
  input_type: CohereEmbedInputType | (string & {});
  embedding_types: ('float' | 'int8' | 'uint8' | 'binary' | 'ubinary' | 'base64')[];
  output_dimension?: number;
  truncate?: string;
}

export interface CohereMeta {
  api_version?: { version?: string };
  billed_units?: { input_tokens?: number; output_tokens?: number; search_units?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  warnings?: string[];
}

export interface CohereEmbedResponse {
  id?: string;
  response_type?: 'embeddings_by_type';
  embeddings: { float?: number[][] };
  texts?: string[];
  meta?: CohereMeta;
}

export interface CohereRerankRequest {
  model: string;
  query: string;
  documents: string[];
  top_n?: number;
  max_tokens_per_doc?: number;
}

export interface CohereRerankResponse {
  id?: string;
  results: { index: number; relevance_score: number }[];
  meta?: CohereMeta;
}

export interface CohereModel {
  name: string;
  endpoints?: string[];
  finetuned?: boolean;
  context_length?: number;
  tokenizer_url?: string;
  default_endpoints?: string[];
  features?: string[] | null;
}

export interface CohereModelList {
  models: CohereModel[];
  next_page_token?: string;
}
