// AWS Bedrock Runtime Converse / ConverseStream wire shapes (the subset the gateway reads and writes).
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html

export type BedrockImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
export type BedrockDocumentFormat = 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md';

export interface BedrockToolUse {
  toolUseId: string;
  name: string;
  input: unknown;
}

export interface BedrockToolResult {
  toolUseId: string;
  content: Array<{ text: string } | { json: unknown } | { image: BedrockImage['image'] }>;
  status?: 'success' | 'error';
}

export interface BedrockImage {
  image: { format: BedrockImageFormat; source: { bytes: string } };
}

export interface BedrockReasoning {
  reasoningContent: { reasoningText?: { text: string; signature?: string }; redactedContent?: string };
}

export type BedrockContentBlock =
  | { text: string }
  | BedrockImage
  | { document: { format: BedrockDocumentFormat; name: string; source: { bytes: string } } }
  | { toolUse: BedrockToolUse }
  | { toolResult: BedrockToolResult }
  | BedrockReasoning;

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface BedrockTool {
  toolSpec: { name: string; description?: string; inputSchema: { json: unknown } };
}

export type BedrockToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface BedrockConverseRequest {
  messages: BedrockMessage[];
  system?: Array<{ text: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: BedrockTool[]; toolChoice?: BedrockToolChoice };
  additionalModelRequestFields?: Record<string, unknown>;
}

export type BedrockStopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | (string & {});

export interface BedrockUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface BedrockConverseResponse {
  output?: { message?: { role: 'assistant'; content: BedrockContentBlock[] } };
  stopReason?: BedrockStopReason;
  usage?: BedrockUsage;
  metrics?: { latencyMs?: number };
}

/** ConverseStream event payloads, keyed by their `:event-type` header. */
export interface BedrockStreamEvents {
  messageStart: { role: 'assistant' };
  contentBlockStart: { contentBlockIndex: number; start?: { toolUse?: { toolUseId: string; name: string } } };
  contentBlockDelta: {
    contentBlockIndex: number;
    delta?: {
      text?: string;
      toolUse?: { input?: string };
      reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
    };
  };
  contentBlockStop: { contentBlockIndex: number };
  messageStop: { stopReason?: BedrockStopReason; additionalModelResponseFields?: unknown };
  metadata: { usage?: BedrockUsage; metrics?: { latencyMs?: number } };
}
