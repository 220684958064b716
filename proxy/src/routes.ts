// The route table. The OpenAI-format operations are served at /v1, under the /openai compatibility
// prefix (with and without /v1, as OpenAI SDK base URLs are written both ways) and under each
// framework prefix; the native Anthropic and GenAI route sets likewise under their prefixes.
import type { Methods, PatternRoutes, Routes } from './http/server.ts';
import { chatCompletions } from './endpoints/chat.ts';
import { textCompletions } from './endpoints/completions.ts';
import { embeddings } from './endpoints/embeddings.ts';
import { rerank } from './endpoints/rerank.ts';
import { listModels } from './endpoints/models.ts';
import { health, metrics } from './endpoints/health.ts';
import { responses } from './endpoints/responses.ts';
import { PASSTHROUGH_PATTERN } from './endpoints/passthrough.ts';
import { anthropicMessages, anthropicModels } from './endpoints/native/anthropic.ts';
import { GENAI_PATTERNS, genaiModels } from './endpoints/native/genai.ts';

const OPENAI_SET: Routes = {
  '/chat/completions': { POST: chatCompletions },
  '/completions': { POST: textCompletions },
  '/responses': { POST: responses },
  '/embeddings': { POST: embeddings },
  '/models': { GET: listModels },
  '/rerank': { POST: rerank },
};

/** Provider-native route sets, served at their prefix and under each framework prefix. */
export const NATIVE_ROUTES: { exact: Routes; patterns: [string, Methods][] } = {
  exact: {
    '/anthropic/v1/messages': { POST: anthropicMessages },
    '/anthropic/v1/models': { GET: anthropicModels },
    '/genai/v1beta/models': { GET: genaiModels },
  },
  patterns: GENAI_PATTERNS,
};

export const FRAMEWORK_PREFIXES = ['/litellm', '/langchain', '/pydanticai'] as const;

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
    '/health': { GET: health },
    '/metrics': { GET: metrics },
  };
  const patterns: PatternRoutes = [];
  for (const prefix of ['', ...FRAMEWORK_PREFIXES]) {
    for (const [source, methods] of native.patterns) patterns.push([new RegExp(`^${prefix}${source}$`), methods]);
  }
  patterns.push(PASSTHROUGH_PATTERN);
  return { routes, patterns };
}
