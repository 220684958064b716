// Built-in providers as data: where each lives, which wire format it speaks, how it authenticates
// and which unified operations it offers. OpenAI-compatible providers differ only here.
import type { MediaOperation, Operation } from '../unified/operations.ts';

/**
 * The wire shape of a provider's decisions API: OpenAI's Decisions API, System One (`state` and a map
 * of questions), or OpenRouter's alpha variant of System One (string criteria, optional
 * probabilities and confidence, a cost in usage).
 */
export type DecisionsShape = 'openai' | 'systemone' | 'openrouter';

export type WireFormat = 'openai' | 'anthropic' | 'gemini' | 'bedrock' | 'cohere' | 'vertex' | 'azure';
const MEDIA: MediaOperation[] = ['image_generation', 'image_edit', 'image_variation', 'speech', 'transcription'];

export interface ProviderKind {
  format: WireFormat;
  baseUrl: string;
  /** Path between the base URL and the operation path (OpenAI-compatible APIs differ here). */
  pathPrefix: string;
  /** Environment variable read for a key when no config.json is given. */
  envKey: string;
  /** Local servers run without a key. */
  keyless: boolean;
  operations: ReadonlySet<Operation>;
  nativeResponses: boolean;
  /** Which wire shape its decisions API speaks (OpenAI's when unset). */
  decisionsShape?: DecisionsShape;
}

const CHAT: Operation[] = ['chat', 'responses', 'models'];

function kind(format: WireFormat, baseUrl: string, envKey: string, extra: Operation[], opts: Partial<ProviderKind> = {}): ProviderKind {
  return {
    format,
    baseUrl,
    envKey,
    pathPrefix: format === 'gemini' ? '/v1beta' : '/v1',
    keyless: false,
    nativeResponses: false,
    operations: new Set([...CHAT, ...extra]),
    ...opts,
  };
}

export const PROVIDER_KINDS: Readonly<Record<string, ProviderKind>> = {
  openai: kind('openai', 'https://api.openai.com', 'OPENAI_API_KEY', ['text', 'embeddings', 'count_tokens', 'moderation', 'decisions', 'video_generation', 'files', 'batches', 'containers', 'realtime', ...MEDIA], { nativeResponses: true }),
  anthropic: kind('anthropic', 'https://api.anthropic.com', 'ANTHROPIC_API_KEY', ['count_tokens']),
  // Veo video generation (predictLongRunning), as on Vertex.
  // The Live API (realtime: BidiGenerateContent over WebSocket, translated from OpenAI's events).
  gemini: kind('gemini', 'https://generativelanguage.googleapis.com', 'GEMINI_API_KEY', ['embeddings', 'count_tokens', 'video_generation', 'realtime']),
  // Groq's files and batches follow OpenAI's API (/openai/v1/files, /openai/v1/batches).
  groq: kind('openai', 'https://api.groq.com/openai', 'GROQ_API_KEY', ['files', 'batches', 'speech', 'transcription']),
  // Mistral's document OCR (/v1/ocr) is the unified OCR shape.
  mistral: kind('openai', 'https://api.mistral.ai', 'MISTRAL_API_KEY', ['embeddings', 'transcription', 'ocr']),
  // Ollama serves System One decision models at /v1/systemone (v0.35+).
  ollama: kind('openai', 'http://localhost:11434', 'OLLAMA_API_KEY', ['text', 'embeddings', 'decisions'], { keyless: true, decisionsShape: 'systemone' }),
  // OpenRouter's decisions are an alpha endpoint beside the versioned API: /api/alpha/decisions.
  openrouter: kind('openai', 'https://openrouter.ai/api', 'OPENROUTER_API_KEY', ['text', 'decisions'], { decisionsShape: 'openrouter' }),
  xai: kind('openai', 'https://api.x.ai', 'XAI_API_KEY', ['image_generation'], { nativeResponses: true }),
  cerebras: kind('openai', 'https://api.cerebras.ai', 'CEREBRAS_API_KEY', ['text']),
  perplexity: kind('openai', 'https://api.perplexity.ai', 'PERPLEXITY_API_KEY', [], { pathPrefix: '' }),
  // Fireworks serves System One models in OpenAI's Decisions shape at /inference/v1/decisions.
  fireworks: kind('openai', 'https://api.fireworks.ai/inference', 'FIREWORKS_API_KEY', ['text', 'embeddings', 'decisions']),
  deepseek: kind('openai', 'https://api.deepseek.com', 'DEEPSEEK_API_KEY', [], { pathPrefix: '' }),
  vllm: kind('openai', 'http://localhost:8000', 'VLLM_API_KEY', ['text', 'embeddings', 'transcription'], { keyless: true }),
  // Paths carry their own version (chat/embed/rerank under /v2, the models list under /v1).
  cohere: kind('cohere', 'https://api.cohere.com', 'COHERE_API_KEY', ['embeddings', 'rerank'], { pathPrefix: '' }),
  // Region comes from the first key's bedrock_key_config (base_url overrides); list-models is not offered yet.
  bedrock: kind('bedrock', 'https://bedrock-runtime.us-east-1.amazonaws.com', 'AWS_BEARER_TOKEN_BEDROCK', [], { pathPrefix: '', operations: new Set(['chat', 'responses']) }),
  // Gemini and Claude on Google Cloud; host from the first key's vertex_key_config region (base_url overrides),
  // project and location from each key. No config from plain environment variables (see load.ts).
  // OCR is Mistral's OCR model served as a partner model (publishers/mistralai).
  vertex: kind('vertex', 'https://us-central1-aiplatform.googleapis.com', 'VERTEX_PROJECT_ID', [], { operations: new Set(['chat', 'responses', 'embeddings', 'ocr', 'video_generation']) }),
  // OpenAI on Azure: endpoint, deployments, api-version and auth from each key's azure_key_config
  // (base_url stands in for a key without one); there is no default endpoint, so load.ts requires one.
  // Containers and Sora 2's videos are served by Azure's v1 API only (`/openai/v1/...`, see azure/paths.ts);
  // OCR is Mistral Document AI on the resource's Foundry host (azure/ocr.ts).
  azure: kind('azure', 'https://your-resource.openai.azure.com', 'AZURE_OPENAI_API_KEY', ['text', 'embeddings', 'containers', 'video_generation', 'ocr', 'realtime'], { pathPrefix: '/openai', nativeResponses: true }),
};
// A client-chosen provider name (`constructor/gpt-4o`) must not find Object.prototype's members.
Object.setPrototypeOf(PROVIDER_KINDS, null);

/** Base provider types a custom provider may extend. */
export const BASE_PROVIDER_TYPES = ['openai', 'anthropic', 'gemini'] as const;
