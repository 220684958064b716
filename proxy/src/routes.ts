// The route table. The operations of unified/operations.ts, the model list and the Files and Batch
// APIs are served under each OpenAI-format prefix (OPENAI_PREFIXES: /v1, /openai/v1, /openai and
// each framework prefix's /v1); the native route sets under their own prefixes and each framework
// prefix. Built once at start: a request's lookup is one map access (or the patterns, in order).
import type { Methods, PatternRoutes, Routes } from './http/server.ts';
import { FRAMEWORK_PREFIXES, OPENAI_PREFIXES, OPERATIONS } from './unified/operations.ts';
import { operationHandler } from './endpoints/operations.ts';
import { listModels } from './endpoints/models.ts';
import { health, metrics, ready } from './endpoints/health.ts';
import { PASSTHROUGH_PATTERN } from './endpoints/passthrough.ts';
import { anthropicMessages, anthropicModels } from './endpoints/native/anthropic.ts';
import { GENAI_PATTERNS, genaiModels } from './endpoints/native/genai.ts';
import { GENAI_VIDEO_PATTERNS } from './endpoints/native/genai-video.ts';
import { anthropicCountTokens, COUNT_TOKENS_PATTERNS } from './endpoints/native/count-tokens.ts';
import { anthropicComplete } from './endpoints/native/anthropic-complete.ts';
import { BEDROCK_PATTERNS } from './endpoints/native/bedrock.ts';
import { cohereChat, cohereEmbed, cohereRerank } from './endpoints/native/cohere.ts';
import { RESOURCE_PATTERNS, RESOURCE_ROUTES } from './endpoints/resource-routes.ts';
import { VIDEO_PATTERNS, VIDEO_ROUTES } from './endpoints/videos.ts';
import { AZURE_PATTERNS, AZURE_ROUTES } from './endpoints/native/azure.ts';
import { mcpToolExecute } from './endpoints/mcp-execute.ts';
import { MCP_SERVER_ROUTE } from './endpoints/mcp-server.ts';

/** Route sets with the methods of a path joined (POST /videos is an operation, GET /videos the list). */
function merged(...sets: Routes[]): Routes {
  const out: Routes = {};
  for (const set of sets) for (const [path, methods] of Object.entries(set)) out[path] = { ...out[path], ...methods };
  return out;
}

const OPENAI_SET: Routes = merged(
  Object.fromEntries(OPERATIONS.filter((op) => !('ownRoute' in op)).map((op) => [`/${op.path}`, { POST: operationHandler(op.name) }])),
  { '/models': { GET: listModels } },
  RESOURCE_ROUTES,
  VIDEO_ROUTES,
);

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
  patterns: [...GENAI_PATTERNS, ...GENAI_VIDEO_PATTERNS, ...COUNT_TOKENS_PATTERNS, ...BEDROCK_PATTERNS],
};

function under(prefix: string, set: Routes): Routes {
  return Object.fromEntries(Object.entries(set).map(([path, methods]) => [prefix + path, methods]));
}

export function buildRoutes(native: { exact: Routes; patterns: [string, Methods][] } = { exact: {}, patterns: [] }): { routes: Routes; patterns: PatternRoutes } {
  const routes: Routes = {
    ...Object.assign({}, ...OPENAI_PREFIXES.map((p) => under(p, OPENAI_SET))),
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
    for (const [source, methods] of [...RESOURCE_PATTERNS, ...VIDEO_PATTERNS]) patterns.push([new RegExp(`^${prefix}${source}$`), methods]);
  }
  patterns.push(...AZURE_PATTERNS);
  patterns.push(PASSTHROUGH_PATTERN);
  return { routes, patterns };
}
