// Native Gemini API (generativelanguage v1beta) wire shapes, limited to the fields the gateway
// reads or writes. JSON field names are camelCase, as the REST API sends them.

export interface GeminiBlob {
  mimeType: string;
  /** Base64, no `data:` prefix. */
  data: string;
}

export interface GeminiFileData {
  mimeType?: string;
  fileUri: string;
}

export interface GeminiFunctionCall {
  /** Some models return one; the gateway never sends it back (matching is by name and order). */
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiFunctionResponse {
  id?: string;
  name: string;
  /** Must be a JSON object (a protobuf Struct). */
  response: Record<string, unknown>;
}

/** Exactly one data field is set per part; `thought` and `thoughtSignature` ride along. */
export interface GeminiPart {
  text?: string;
  inlineData?: GeminiBlob;
  fileData?: GeminiFileData;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
  executableCode?: { language?: string; code: string };
  codeExecutionResult?: { outcome?: string; output?: string };
  /** The part is a thought summary, not answer text. */
  thought?: boolean;
  /** Opaque, base64; must be sent back on the same part in later turns. */
  thoughtSignature?: string;
}

export type GeminiRole = 'user' | 'model';

export interface GeminiContent {
  /** Absent on systemInstruction. */
  role?: GeminiRole;
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** OpenAPI-3.0-subset schema; mutually exclusive with `parametersJsonSchema`. */
  parameters?: Record<string, unknown>;
  /** Plain JSON Schema describing an object. */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[];
  googleSearch?: Record<string, unknown>;
  codeExecution?: Record<string, unknown>;
}

export type GeminiFunctionCallingMode = 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED';

export interface GeminiToolConfig {
  functionCallingConfig: { mode: GeminiFunctionCallingMode; allowedFunctionNames?: string[] };
}

export interface GeminiThinkingConfig {
  /** Tokens; 0 disables thinking, -1 lets the model decide. */
  thinkingBudget?: number;
  includeThoughts?: boolean;
  /** Gemini 3: 'minimal' | 'low' | 'medium' | 'high'. */
  thinkingLevel?: string;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  /** OpenAPI-subset schema; mutually exclusive with `responseJsonSchema`. */
  responseSchema?: Record<string, unknown>;
  /** Plain JSON Schema; requires `responseMimeType`. */
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GeminiSafetySetting {
  category: string;
  threshold: string;
}

/** Body of POST /v1beta/models/{model}:generateContent (and :streamGenerateContent). */
export interface GeminiGenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
  safetySettings?: GeminiSafetySetting[];
  cachedContent?: string;
}

export type GeminiFinishReason =
  | 'FINISH_REASON_UNSPECIFIED'
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'LANGUAGE'
  | 'OTHER'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'MALFORMED_FUNCTION_CALL'
  | 'IMAGE_SAFETY'
  | 'IMAGE_PROHIBITED_CONTENT'
  | 'IMAGE_RECITATION'
  | 'IMAGE_OTHER'
  | 'NO_IMAGE'
  | 'UNEXPECTED_TOOL_CALL'
  | 'TOO_MANY_TOOL_CALLS'
  | (string & {});

export interface GeminiSafetyRating {
  category: string;
  probability: string;
  blocked?: boolean;
}

export interface GeminiCandidate {
  /** Absent when the candidate was blocked before producing anything. */
  content?: GeminiContent;
  finishReason?: GeminiFinishReason;
  finishMessage?: string;
  index?: number;
  safetyRatings?: GeminiSafetyRating[];
  tokenCount?: number;
}

export interface GeminiModalityTokenCount {
  modality: string;
  tokenCount: number;
}

export interface GeminiUsageMetadata {
  /** Includes cached content tokens. */
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  /** Answer tokens only; thoughts are counted separately. */
  candidatesTokenCount?: number;
  toolUsePromptTokenCount?: number;
  thoughtsTokenCount?: number;
  /** prompt + toolUsePrompt + candidates + thoughts. */
  totalTokenCount?: number;
  promptTokensDetails?: GeminiModalityTokenCount[];
  candidatesTokensDetails?: GeminiModalityTokenCount[];
}

export interface GeminiPromptFeedback {
  /** Set when the prompt itself was blocked; there are then no candidates. */
  blockReason?: 'BLOCK_REASON_UNSPECIFIED' | 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT' | 'IMAGE_SAFETY' | (string & {});
  blockReasonMessage?: string;
  safetyRatings?: GeminiSafetyRating[];
}

/** Non-streaming answer, and also each `data:` event of streamGenerateContent?alt=sse. */
export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: GeminiPromptFeedback;
  /** Cumulative in streams: every chunk carries the totals so far. */
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

export type GeminiTaskType =
  | 'TASK_TYPE_UNSPECIFIED'
  | 'RETRIEVAL_QUERY'
  | 'RETRIEVAL_DOCUMENT'
  | 'SEMANTIC_SIMILARITY'
  | 'CLASSIFICATION'
  | 'CLUSTERING'
  | 'QUESTION_ANSWERING'
  | 'FACT_VERIFICATION'
  | 'CODE_RETRIEVAL_QUERY';

/** Body of :embedContent, and one entry of :batchEmbedContents `requests`. */
export interface GeminiEmbedContentRequest {
  /** `models/<model>`; required inside a batch, must match the URL's model. */
  model?: string;
  content: GeminiContent;
  taskType?: GeminiTaskType;
  title?: string;
  outputDimensionality?: number;
}

export interface GeminiBatchEmbedContentsRequest {
  requests: GeminiEmbedContentRequest[];
}

export interface GeminiContentEmbedding {
  values: number[];
}

export interface GeminiEmbedContentResponse {
  embedding: GeminiContentEmbedding;
}

export interface GeminiBatchEmbedContentsResponse {
  embeddings: GeminiContentEmbedding[];
}

/** Google's standard error envelope (google.rpc.Status as JSON). */
export interface GeminiErrorBody {
  error: {
    /** HTTP status code. */
    code?: number;
    message?: string;
    /** Canonical gRPC code name, e.g. INVALID_ARGUMENT, RESOURCE_EXHAUSTED. */
    status?: string;
    details?: Array<Record<string, unknown>>;
  };
}

/** One entry of GET /v1beta/models. */
export interface GeminiModel {
  /** `models/<id>`. */
  name: string;
  baseModelId?: string;
  version?: string;
  displayName?: string;
  description?: string;
  inputTokenLimit?: number;
  outputTokenLimit?: number;
  supportedGenerationMethods?: string[];
  thinking?: boolean;
}

export interface GeminiListModelsResponse {
  models?: GeminiModel[];
  nextPageToken?: string;
}
