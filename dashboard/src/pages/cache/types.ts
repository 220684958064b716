// The response cache's plugin name, as /api/plugins lists it (answer shapes: proxy/src/api/answers.ts).
export const SEMANTIC_CACHE = 'semantic_cache';
