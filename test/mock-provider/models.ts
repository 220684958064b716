// Model catalogs of the three providers, in each provider's own model-object shape.

export const OPENAI_MODELS = [
  { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
  { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
  { id: 'gpt-4.1', object: 'model', created: 1744316542, owned_by: 'system' },
  { id: 'o4-mini', object: 'model', created: 1744225351, owned_by: 'system' },
  { id: 'gpt-3.5-turbo-instruct', object: 'model', created: 1692901427, owned_by: 'system' },
  { id: 'text-embedding-3-small', object: 'model', created: 1705948997, owned_by: 'system' },
  { id: 'text-embedding-3-large', object: 'model', created: 1705953180, owned_by: 'system' },
] as const;

export const OPENAI_MODELS_BODY = JSON.stringify({ object: 'list', data: OPENAI_MODELS });

interface AnthropicModel {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
  max_input_tokens: number;
  max_tokens: number;
}

/** Newest first, as the Models API lists them. */
export const ANTHROPIC_MODELS: AnthropicModel[] = [
  { type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5', created_at: '2025-10-15T00:00:00Z', max_input_tokens: 200000, max_tokens: 64000 },
  { type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z', max_input_tokens: 200000, max_tokens: 64000 },
  { type: 'model', id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z', max_input_tokens: 200000, max_tokens: 32000 },
  { type: 'model', id: 'claude-sonnet-4-0', display_name: 'Claude Sonnet 4', created_at: '2025-05-22T00:00:00Z', max_input_tokens: 200000, max_tokens: 64000 },
  { type: 'model', id: 'claude-3-5-haiku-20241022', display_name: 'Claude Haiku 3.5', created_at: '2024-10-22T00:00:00Z', max_input_tokens: 200000, max_tokens: 8192 },
];

interface GeminiModel {
  name: string;
  baseModelId: string;
  version: string;
  displayName: string;
  description: string;
  inputTokenLimit: number;
  outputTokenLimit: number;
  supportedGenerationMethods: string[];
  temperature?: number;
  maxTemperature?: number;
  topP?: number;
  topK?: number;
  thinking?: boolean;
}

const CHAT_METHODS = ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'];
const EMBED_METHODS = ['embedContent', 'batchEmbedContents'];

function chatModel(id: string, displayName: string, version: string): GeminiModel {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version,
    displayName,
    description: `${displayName} (mock)`,
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: CHAT_METHODS,
    temperature: 1,
    maxTemperature: 2,
    topP: 0.95,
    topK: 64,
    thinking: true,
  };
}

export const GEMINI_MODELS: GeminiModel[] = [
  chatModel('gemini-2.5-flash', 'Gemini 2.5 Flash', '001'),
  chatModel('gemini-2.5-pro', 'Gemini 2.5 Pro', '2.5'),
  chatModel('gemini-2.5-flash-lite', 'Gemini 2.5 Flash-Lite', '001'),
  { ...chatModel('gemini-2.0-flash', 'Gemini 2.0 Flash', '2.0'), outputTokenLimit: 8192, thinking: undefined, topK: 40 },
  {
    name: 'models/text-embedding-004',
    baseModelId: 'text-embedding-004',
    version: '004',
    displayName: 'Text Embedding 004',
    description: 'Obtain a distributed representation of a text (mock).',
    inputTokenLimit: 2048,
    outputTokenLimit: 1,
    supportedGenerationMethods: EMBED_METHODS,
  },
  {
    name: 'models/gemini-embedding-001',
    baseModelId: 'gemini-embedding-001',
    version: '001',
    displayName: 'Gemini Embedding 001',
    description: 'Obtain a distributed representation of a text (mock).',
    inputTokenLimit: 2048,
    outputTokenLimit: 1,
    supportedGenerationMethods: EMBED_METHODS,
  },
];

/** Models whose name starts with this are treated as unknown (404), so tests can exercise that path. */
export const NONEXISTENT_PREFIX = 'nonexistent';

export function isNonexistentModel(model: string): boolean {
  return model.startsWith(NONEXISTENT_PREFIX) || model.startsWith(`models/${NONEXISTENT_PREFIX}`);
}
