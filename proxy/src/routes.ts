// The route table. The OpenAI-format operations are served at /v1, under the /openai compatibility
// prefix (with and without /v1, as OpenAI SDK base URLs are written both ways) and under each
// framework prefix; the native Anthropic and GenAI route sets likewise under their prefixes.
import type { Methods, PatternRoutes, Routes } from './http/server.ts';
import { chatCompletions } from './operations/chat.ts';
import { textCompletions } from './operations/completions.ts';
import { embeddings } from './operations/embeddings.ts';
import { rerank } from './operations/rerank.ts';
import { imageEdits, imageGenerations, imageVariations } from './operations/images.ts';
import { speech, transcriptions } from './operations/audio.ts';
import { listModels } from './endpoints/models.ts';
import { health, metrics, ready } from './endpoints/health.ts';
import { responses } from './operations/responses.ts';
import { PASSTHROUGH_PATTERN } from './endpoints/passthrough.ts';
import { anthropicMessages, anthropicModels } from './endpoints/native/anthropic.ts';
import { GENAI_PATTERNS, genaiModels } from './endpoints/native/genai.ts';
import { countTokens } from './operations/count-tokens.ts';
import { anthropicCountTokens, COUNT_TOKENS_PATTERNS } from './endpoints/native/count-tokens.ts';
import { anthropicComplete } from './endpoints/native/anthropic-complete.ts';
import { BEDROCK_PATTERNS } from './endpoints/native/bedrock.ts';
import { cohereChat, cohereEmbed, cohereRerank } from './endpoints/native/cohere.ts';
import { RESOURCE_PATTERNS, RESOURCE_ROUTES } from './endpoints/resource-routes.ts';
import { AZURE_PATTERNS, AZURE_ROUTES } from './endpoints/native/azure.ts';
import { mcpToolExecute } from './endpoints/mcp-execute.ts';
import { MCP_SERVER_ROUTE } from './endpoints/mcp-server.ts';

const OPENAI_SET: Routes = {
  '/chat/completions': { POST: chatCompletions },
  '/completions': { POST: textCompletions },
  '/responses': { POST: responses },
  '/embeddings': { POST: embeddings },
  '/models': { GET: listModels },
  '/rerank': { POST: rerank },
  '/responses/input_tokens': { POST: countTokens },
  ...RESOURCE_ROUTES,
  '/images/generations': { POST: imageGenerations },
  '/images/edits': { POST: imageEdits },
  '/images/variations': { POST: imageVariations },
  '/audio/speech': { POST: speech },
  '/audio/transcriptions': { POST: transcriptions },
};

/** Provider-native route sets, served at their prefix and under each framework prefix. */
export const NATIVE_ROUTES: { exact: Routes; patterns: [string, Methods][] } = {
  exact: {
    '/anthropic/v1/messages': { POST: anthropicMessages },
    '/anthropic/v1/messages/count_tokens': { POST: anthropicCountTokens },
    '/anthropic/v1/complete': { POST: anthropicComplete },
    '/anthropic/v1/models': { GET: anthropicModels },
    '/genai/v1beta/models': { GET: genaiModels },
    '/cohere/v2/chat': { POST: cohereChat },
    '/cohere/v2/embed': { POST: cohereEmbed },
    '/cohere/v2/rerank': { POST: cohereRerank },
  },
  patterns: [...GENAI_PATTERNS, ...COUNT_TOKENS_PATTERNS, ...BEDROCK_PATTERNS],
};

export const FRAMEWORK_PREFIXES = ['/litellm', '/langchain', '/pydanticai'] as const;

/** Where OPENAI_SET is served; its path patterns (file and batch ids) and the async routes go under the same prefixes. */
export const OPENAI_PREFIXES = ['/v1', '/openai/v1', '/openai', ...FRAMEWORK_PREFIXES.map((p) => `${p}/v1`)];

function under(prefix: string, set: Routes): Routes {
  return Object.fromEntries(Object.entries(set).map(([path, methods]) => [prefix + path, methods]));
}

export function buildRoutes(native: { exact: Routes; patterns: [string, Methods][] } = { exact: {}, patterns: [] }): { routes: Routes; patterns: PatternRoutes } {
  const routes: Routes = {
    ...under('/v1', OPENAI_SET),
    ...under('/openai/v1', OPENAI_SET),
    ...under('/openai', OPENAI_SET),
    ...Object.assign({}, ...FRAMEWORK_PREFIXES.map((p) => under(`${p}/v1`, OPENAI_SET))),
    ...native.exact,
    ...Object.assign({}, ...FRAMEWORK_PREFIXES.map((p) => under(p, native.exact))),
    // Azure OpenAI deployment routes under /openai (AzureOpenAI clients with `{gateway}/openai` as endpoint).
    ...AZURE_ROUTES,
    '/health': { GET: health },
    '/ready': { GET: ready },
    '/metrics': { GET: metrics },
    '/v1/mcp/tool/execute': { POST: mcpToolExecute },
    '/mcp': MCP_SERVER_ROUTE,
  };
  const patterns: PatternRoutes = [];
  for (const prefix of ['', ...FRAMEWORK_PREFIXES]) {
    for (const [source, methods] of native.patterns) patterns.push([new RegExp(`^${prefix}${source}$`), methods]);
  }
  for (const prefix of OPENAI_PREFIXES) {
    for (const [source, methods] of RESOURCE_PATTERNS) patterns.push([new RegExp(`^${prefix}${source}$`), methods]);
  }
  patterns.push(...AZURE_PATTERNS);
  patterns.push(PASSTHROUGH_PATTERN);
  return { routes, patterns };
}
