// Hostile-input fuzzing of the whole inbound surface: every route of the route table (each allowed
// method and one that is not), random paths around them (malformed percent-escapes, unicode,
// `..`, very long segments), query strings, headers and JSON bodies (deep nesting, wrong types, huge
// numbers, `__proto__`), over HTTP/1.1 and h2c, plus /api (express, HTTP/1.1) and raw garbage on
// the socket. After every request: the process is up, the answer is a 2xx/4xx/5xx (never a 500
// from a bug), every error carries an error object, and /health stays fast.
// Reproduce a failure with FUZZ_SEED=<seed printed below>.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';
import fc from 'fast-check';
import { buildRoutes, NATIVE_ROUTES } from '../../proxy/src/routes.ts';
import { CALL_PATHS } from '../../proxy/src/realtime/calls.ts';
import { asyncRoutes } from '../../proxy/src/endpoints/async.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/setup.ts';
import { eventually } from '../helpers/patience.ts';

// A fixed seed keeps CI deterministic; FUZZ_SEED=random explores new inputs (the seed is printed).
const SEED = process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const HEALTH_MS = 100;

let stack: Stack;
let session: ClientHttp2Session;
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
/** Slowest /health seen while fuzzing, and how many answers were checked. */
const stats = { healthMaxMs: 0, requests: 0, statuses: {} as Record<number, number> };

before(async () => {
  process.stdout.write(`# fuzz seed ${SEED} (FUZZ_SEED=${SEED} reproduces), ${RUNS} runs per property\n`);
  // Request logging on, so /api/logs (and the logging stage) are fuzzed too.
  // Mistral (OCR) and Ollama (System One decisions) too, so those translations are fuzzed.
  stack = await startStack((u) => ({ providers: { ...mockProviders(u), mistral: mockProvider(u, 'mistral'), ollama: mockProvider(u, 'ollama') }, client: { enable_logging: true } }));
  session = h2connect(stack.gateway.url);
  session.on('error', () => undefined);
});
after(async () => {
  process.stdout.write(`# ${stats.requests} fuzzed requests, slowest /health ${stats.healthMaxMs.toFixed(1)} ms, statuses ${JSON.stringify(stats.statuses)}\n`);
  session?.close();
  agent.destroy();
  await stack?.close();
});

// ---------------------------------------------------------------------------------------------
// The route table, as the gateway builds it: exact paths and a sample path per pattern.

const { routes, patterns } = buildRoutes(NATIVE_ROUTES);
// Async routes are added at start (they need the jobs): the same table, with no jobs behind it.
const asyncSet = asyncRoutes(undefined);
Object.assign(routes, asyncSet.routes);
patterns.push(...asyncSet.patterns);
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/** A path the pattern matches: each capture group replaced by a plausible value. */
function samplePath(re: RegExp): string {
  const path = re.source
    .replace(/^\^/, '')
    .replace(/\$$/, '')
    .replace(/\(\[a-z0-9\]\[a-z0-9-\]\*\)/g, 'openai')
    .replace(/\(\\\/\.\*\)/g, '/v1/models')
    .replace(/\(\[\^\/\]\+\)/g, 'file-abc123')
    .replace(/\(\.\+\)/g, 'gpt-4o')
    .replace(/\(\[A-Za-z0-9_-\]\{1,128\}\)/g, 'job-abc123')
    .replace(/\\\//g, '/');
  assert.ok(re.test(path), `sample ${path} matches ${re.source}`);
  return path;
}

interface Route {
  path: string;
  methods: string[];
}

const ROUTES: Route[] = [
  ...Object.entries(routes).map(([path, m]) => ({ path, methods: Object.keys(m) })),
  ...patterns.map(([re, m]) => ({ path: samplePath(re), methods: Object.keys(m) })),
  // The dashboard's page, assets and live socket (served when the table misses).
  ...['/', '/index.html', '/assets/app.js', '/ws'].map((path) => ({ path, methods: ['GET'] })),
  // WebRTC calls (added at start, beside the route table): the offer, and a call's actions.
  ...CALL_PATHS.map((path) => ({ path, methods: ['POST'] })),
  ...CALL_PATHS.flatMap((p) => ['hangup', 'accept'].map((verb) => ({ path: `${p}/rtc_bf_fuzz/${verb}`, methods: ['POST'] }))),
];

const API_ROUTES: Route[] = [
  ['/api/session/login', ['POST']],
  ['/api/session/logout', ['POST']],
  ['/api/session/is-auth-enabled', ['GET']],
  ['/api/session/ws-ticket', ['POST']],
  ['/api/dashboard', ['GET']],
  ['/api/governance/usage', ['GET']],
  ['/api/config', ['GET', 'PUT']],
  ['/api/config/status', ['GET']],
  ['/api/config/settings', ['GET']],
  ['/api/version', ['GET']],
  ['/api/models', ['GET']],
  ['/api/keys', ['GET']],
  ['/api/plugins', ['GET', 'POST']],
  ['/api/plugins/fuzz', ['GET', 'PUT', 'DELETE']],
  ['/api/providers', ['GET', 'POST']],
  ['/api/providers/fuzzp', ['GET', 'PUT', 'DELETE']],
  ['/api/providers/fuzzp/keys', ['GET', 'POST']],
  ['/api/providers/fuzzp/keys/k1', ['GET', 'PUT', 'DELETE']],
  ['/api/routing/rules', ['GET', 'POST']],
  ['/api/routing/rules/r1', ['GET', 'PUT', 'DELETE']],
  ['/api/governance/routing-rules', ['GET', 'POST']],
  ['/api/routing/rules/validate', ['POST']],
  ['/api/routing/rules/test', ['POST']],
  ['/api/governance/routing-rules/test', ['POST']],
  ['/api/logs', ['GET', 'DELETE']],
  ['/api/logs/l1', ['GET']],
  ['/api/cache/clear/c1', ['DELETE']],
  ['/api/cache/clear-by-key/k1', ['DELETE']],
  ['/api/cache/stats', ['GET']],
  ['/api/webhooks', ['GET', 'POST']],
  ['/api/webhooks/w1', ['GET', 'PUT', 'DELETE']],
  ['/api/webhooks/w1/rotate-secret', ['POST']],
  ['/api/webhooks/w1/test', ['POST']],
  ['/api/webhooks/w1/deliveries', ['GET']],
  ['/api/webhooks/deliveries', ['GET']],
  ['/api/webhooks/deliveries/d1/redeliver', ['POST']],
  ['/api/mcp/clients', ['GET']],
  ['/api/mcp/client', ['POST']],
  ['/api/mcp/client/m1', ['GET', 'PUT', 'DELETE']],
  ['/api/mcp/client/m1/reconnect', ['POST']],
  ['/api/mcp-logs', ['GET']],
  ['/api/realtime/sessions', ['GET']],
  ...['stats', 'dropped', 'filterdata', 'histogram', 'histogram/tokens', 'histogram/cost', 'histogram/models', 'histogram/cost/by-provider', 'histogram/tokens/by-provider', 'histogram/latency', 'histogram/latency/by-provider'].map((p): [string, string[]] => [`/api/logs/${p}`, ['GET']]),
  ['/api/playground', ['POST']],
  ['/api/playground/models', ['GET']],
  ['/api/governance/pricing', ['GET']],
  ...['virtual-keys', 'teams', 'customers', 'budgets', 'rate-limits', 'model-configs', 'pricing-overrides'].flatMap((c): [string, string[]][] => [
    [`/api/governance/${c}`, ['GET', 'POST']],
    [`/api/governance/${c}/x1`, ['GET', 'PUT', 'DELETE']],
  ]),
].map(([path, methods]) => ({ path: path as string, methods: methods as string[] }));

// ---------------------------------------------------------------------------------------------
// Generators.

/** Anything outside printable ASCII is percent-encoded (what a client library would put on the wire). */
const wire = (s: string) => s.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));

const segment = fc.oneof(
  fc.constantFrom('%', '%z', '%zz', '%E0%A4', '%C0%AF', '%00', '%2e%2e', '%2F', '%252F', '..', '.', '', '__proto__', 'constructor', '%ff%fe', '%u0041'),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map(wire),
  fc.string({ unit: 'binary-ascii', maxLength: 16 }).map(wire),
  fc.integer({ min: 200, max: 6000 }).map((n) => 'a'.repeat(n)),
  fc.constantFrom('gpt-4o', 'openai', 'anthropic%2Fclaude-sonnet-4-5', 'models', 'v1', ':generateContent', 'x:countTokens', 'converse'),
);

const routeArb = (table: Route[]) => fc.constantFrom(...table);

/** A route's path, sometimes bent: a segment swapped, inserted or appended, a trailing slash. */
const pathArb = (table: Route[]) =>
  fc.tuple(routeArb(table), fc.nat({ max: 9 }), segment, fc.nat()).map(([route, how, seg, at]) => {
    const parts = route.path.split('/');
    const i = 1 + (at % Math.max(1, parts.length - 1));
    if (how === 0) parts[i] = seg;
    else if (how === 1) parts.splice(i, 0, seg);
    else if (how === 2) parts.push(seg);
    else if (how === 3) return { route, path: route.path + '/' };
    else if (how === 4) return { route, path: route.path + '//' + seg };
    else return { route, path: route.path };
    return { route, path: parts.join('/') };
  });

const queryArb = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom('key', 'api-version', 'alt', 'limit', 'after', 'order', 'purpose', '__proto__', 'beta'), fc.string({ maxLength: 8 }).map(wire)),
        fc.oneof(fc.constantFrom('sse', '2024-10-21', '%', '%zz', '-1', '1e999', 'true', ''), fc.string({ maxLength: 20 }).map(wire)),
      ),
      { maxLength: 5 },
    )
    .map((pairs) => '?' + pairs.map(([k, v]) => `${k}=${v}`).join('&')),
);

const headerValue = fc.oneof(
  fc.constantFrom('', 'application/json', 'text/plain', 'multipart/form-data; boundary=xyz', 'multipart/form-data', 'Bearer sk-bf-nope', '2023-06-01', 'prompt-caching-2024-07-31', 'gzip', 'true', '-1', '%zz'),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, '').trim()),
);
const headersArb = fc.dictionary(
  fc.oneof(
    fc.constantFrom('content-type', 'authorization', 'x-api-key', 'x-bf-vk', 'x-goog-api-key', 'anthropic-version', 'anthropic-beta', 'accept', 'accept-encoding', 'x-bf-cache-key', 'x-amz-target', 'origin', 'cookie', 'x-forwarded-for', 'api-key'),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  ),
  headerValue,
  { maxKeys: 5 },
);

const hostileValue = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 0.5, '', 'x'.repeat(3000), [], {}, '__proto__'),
  // Objects that break String(x) and `${x}`: code that formats client values must not throw.
  fc.constantFrom({ toString: 1 }, { toString: [], valueOf: [] }, { type: { toString: 'x' } }),
  fc.string({ maxLength: 20 }),
  fc.integer(),
);
const FIELDS = ['model', 'messages', 'stream', 'input', 'prompt', 'max_tokens', 'tools', 'tool_choice', 'contents', 'n', 'temperature', 'system', 'role', 'content', 'fallbacks', 'file_id', 'input_file_id', 'endpoint', 'completion_window', 'documents', 'query', 'texts', 'response_format', 'stop', 'size', 'voice', 'inferenceConfig', 'generationConfig', 'anthropic_version', 'name', 'value', 'keys', 'providers', 'id', 'rules', 'expression', 'cel_expression', 'budget', 'provider_configs'];
const keyArb = fc.oneof(fc.constantFrom(...FIELDS, '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString'), fc.string({ maxLength: 10 }));
const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileValue,
    fc.array(tie('tree'), { maxLength: 4 }),
    fc.dictionary(keyArb, tie('tree'), { maxKeys: 5 }),
  ),
}));

/** Nests `inner` `depth` levels deep in arrays or objects. */
const nested = (depth: number, inner: string, obj: boolean) => (obj ? '{"a":'.repeat(depth) + inner + '}'.repeat(depth) : '['.repeat(depth) + inner + ']'.repeat(depth));

const MODELS = ['openai/gpt-4o', 'anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-flash', 'gpt-4o', 'nope/nope', '', 'openai/', '/gpt-4o'];
/** Near-valid bodies get past validation and reach the translators and the upstream. */
const plausible = fc.record({
  model: fc.constantFrom(...MODELS),
  messages: fc.oneof(fc.constant([{ role: 'user', content: 'hi' }]), fc.array(tree, { maxLength: 3 }), tree),
  max_tokens: fc.oneof(fc.constant(5), hostileValue),
  stream: fc.oneof(fc.boolean(), hostileValue),
  input: fc.oneof(fc.constant('hello'), tree),
  contents: fc.oneof(fc.constant([{ role: 'user', parts: [{ text: 'hi' }] }]), tree),
  extra: tree,
});

const bodyArb = fc.oneof(
  { weight: 3, arbitrary: tree.map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 3, arbitrary: plausible.map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean()).map(([d, o]) => `{"model":"openai/gpt-4o","messages":${nested(d, '1', o)}}`) },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"model":', 'null', '[]', '"str"', '1e99999', '{"__proto__":{"polluted":1},"model":"openai/gpt-4o"}', '{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi"}],"n":1e400}', '\u0000\u0001', '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{}\r\n--xyz--\r\n', '--xyz\r\n\r\n') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
);

// Valid requests per route family, mutated at random places: these get past validation and reach
// the translators (OpenAI to Anthropic/Gemini and back, native formats) and the upstream.
const PNG = 'iVBORw0KGgo=';
const EXAMPLES: [RegExp, unknown][] = [
  [/\/chat\/completions$/, { model: 'openai/gpt-4o', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'ok' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }], tool_choice: 'auto', max_tokens: 5, temperature: 0.5, stream: false, response_format: { type: 'json_object' } }],
  [/\/v1\/complete$/, { model: 'anthropic/claude-sonnet-4-5', prompt: '\n\nHuman: hi\n\nAssistant:', max_tokens_to_sample: 5 }],
  [/\/completions$/, { model: 'openai/gpt-4o', prompt: ['hi', 'there'], max_tokens: 5, stream: false }],
  [/\/input_tokens$|\/responses$/, { model: 'openai/gpt-4o', instructions: 'be brief', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}` }] }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }], tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }], reasoning: { effort: 'low' }, max_output_tokens: 16 }],
  [/\/embeddings$|\/embed$/, { model: 'openai/text-embedding-3-small', input: ['a', 'b'], texts: ['a'], input_type: 'search_document', embedding_types: ['float'], dimensions: 8 }],
  [/\/rerank$/, { model: 'openai/rerank-1', query: 'q', documents: ['a', { text: 'b' }], top_n: 1 }],
  [/\/moderations$/, { model: 'openai/omni-moderation-latest', input: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }],
  [/\/videos$/, { model: 'openai/sora-2', prompt: 'a cat', seconds: '4', size: '720x1280', input_reference: { image_url: `data:image/png;base64,${PNG}` }, fallbacks: ['gemini/veo-3.1-generate-preview'] }],
  [/\/videos\/[^/]+\/remix$/, { prompt: 'again at night' }],
  [/\/videos\/(edits|extensions)$/, { prompt: 'again', video: { id: 'video_0123456789abcdef0123456789abcdef' }, seconds: '4' }],
  [/\/ocr$/, { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: 'data:application/pdf;base64,JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvUGFnZSA+PgplbmRvYmoK' }, pages: '0', include_image_base64: true, image_limit: 2 }],
  [/\/decisions$/, { model: 'ollama/nimble', input: [{ role: 'user', content: [{ type: 'input_text', text: 'refund please' }, { type: 'input_json', data: { order: 1 } }] }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }], questions: [{ type: 'predicate', name: 'p', instructions: 'refund?' }, { type: 'choice', instructions: [{ type: 'input_text', text: 'which?' }], choices: [{ value: 'a' }, { value: false, description: 'no' }] }, { type: 'score', instructions: 'how?', levels: [{ label: 'low' }, { label: 'high' }] }] }],
  [/\/systemone$/, { model: 'openai/gpt-6-luna', state: { ticket: 'refund please' }, questions: { p: { type: 'noul', instructions: 'refund?', criteria: { true: 'yes' } }, c: { type: 'choice', instructions: 'which?', criteria: { a: null, b: 'bee' } }, s: { type: 'score', instructions: 'how?', criteria: ['low', 'high'] } } }],
  [/\/images\/generations$/, { model: 'openai/dall-e-3', prompt: 'a cat', n: 1, size: '1024x1024', response_format: 'b64_json' }],
  [/\/audio\/speech$/, { model: 'openai/tts-1', input: 'hi', voice: 'alloy', response_format: 'mp3' }],
  [/\/messages(\/count_tokens)?$|\/invoke(-with-response-stream)?$/, { model: 'claude-sonnet-4-5', anthropic_version: 'bedrock-2023-05-31', max_tokens: 5, system: [{ type: 'text', text: 's' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }], tools: [{ name: 'f', input_schema: { type: 'object' } }], thinking: { type: 'enabled', budget_tokens: 1024 }, stream: false }],
  [/:(stream)?[gG]enerateContent$|:countTokens$/, { contents: [{ role: 'user', parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }, { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } } }] }, { role: 'user', parts: [{ functionResponse: { name: 'f', response: { ok: true } } }] }], tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT' } }] }], generationConfig: { maxOutputTokens: 5, responseMimeType: 'application/json' }, systemInstruction: { parts: [{ text: 's' }] } }],
  [/:embedContent$/, { content: { parts: [{ text: 'hi' }] }, taskType: 'RETRIEVAL_QUERY' }],
  [/:batchEmbedContents$/, { requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'a' }] } }] }],
  [/\/converse(-stream)?$/, { messages: [{ role: 'user', content: [{ text: 'hi' }, { image: { format: 'png', source: { bytes: PNG } } }] }, { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }] }, { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'ok' }] } }] }], system: [{ text: 's' }], inferenceConfig: { maxTokens: 5 }, toolConfig: { tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }] } }],
  [/\/v2\/chat$/, { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }], documents: [{ data: { text: 'd' } }], max_tokens: 5 }],
  [/\/batches$/, { input_file_id: 'file-abc123', endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { a: 'b' } }],
  [/\/containers$/, { name: 'sandbox', expires_after: { anchor: 'last_active_at', minutes: 20 }, file_ids: ['file-abc123'], memory_limit: '4g', network_policy: { type: 'allowlist', allowed_domains: ['example.com'] }, provider: 'openai' }],
  [/\/containers\/[^/]+\/files$/, { file_id: 'file-abc123', provider: 'openai' }],
  [/_passthrough\//, { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }],
];

type Json = unknown;
/** Every place in a JSON value, as key paths (iterative: the examples are small, but no recursion anyway). */
function placesIn(root: Json): (string | number)[][] {
  const out: (string | number)[][] = [];
  const stack: [Json, (string | number)[]][] = [[root, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    out.push(path);
    if (Array.isArray(v)) v.forEach((c, i) => stack.push([c, [...path, i]]));
    else if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) stack.push([c, [...path, k]]);
  }
  return out;
}

const mutation = fc.tuple(fc.nat(), fc.constantFrom('replace', 'delete', 'wrap', 'model'), fc.oneof(hostileValue, tree), fc.constantFrom(...MODELS));
function mutate(example: Json, ops: [number, string, unknown, string][]): Json {
  const doc = structuredClone(example) as Record<string, unknown>;
  for (const [at, op, value, model] of ops) {
    if (op === 'model') {
      doc.model = model;
      continue;
    }
    const places = placesIn(doc).filter((p) => p.length > 0);
    if (places.length === 0) break;
    const path = places[at % places.length];
    let parent = doc as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = path[path.length - 1];
    if (op === 'delete') {
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
    } else if (op === 'wrap') parent[last] = [parent[last]];
    // A copy: generated constants are shared between runs and must not be edited in place.
    else parent[last] = structuredClone(value);
  }
  return doc;
}

const exampleFor = (path: string) => EXAMPLES.find(([re]) => re.test(path))?.[1];

interface Fuzzed {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

const requestArb = (table: Route[], methodFor: (route: Route, pick: number) => string) =>
  fc.tuple(pathArb(table), queryArb, headersArb, bodyArb, fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([{ route, path }, query, headers, random, pick, ops]): Fuzzed => {
    const method = methodFor(route, pick);
    const example = exampleFor(route.path);
    // Half the bodies are a mutated valid request for the route, when there is one.
    const body = example !== undefined && pick % 2 === 0 ? JSON.stringify(mutate(example, ops)) : random;
    return { method, path: path + query, headers, body: method === 'GET' || method === 'DELETE' || method === 'OPTIONS' ? undefined : body };
  });

const anyMethod = (route: Route, pick: number) => (pick % 5 === 0 ? METHODS[pick % METHODS.length] : route.methods[pick % route.methods.length]);

// ---------------------------------------------------------------------------------------------
// Sending and checking.

interface Answer {
  status: number;
  text: string;
}

const MAX_ANSWER = 256 * 1024;

function sendH1(r: Fuzzed): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${stack.gateway.url}${r.path}`, { method: r.method, headers: r.headers, agent, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (text.length < MAX_ANSWER) text += d;
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.once('error', reject);
    req.end(r.body);
  });
}

function sendH2(r: Fuzzed): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': r.method, ':path': r.path, ...r.headers }, { endStream: r.body === undefined });
    let status = 0;
    let text = '';
    const timer = setTimeout(() => stream.close(), 10_000);
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => {
      if (text.length < MAX_ANSWER) text += d;
    });
    stream.on('error', () => undefined);
    stream.once('close', () => {
      clearTimeout(timer);
      if (status) resolve({ status, text });
      else reject(new Error(`stream closed without an answer (rst ${stream.rstCode})`));
    });
    if (r.body !== undefined) stream.end(r.body);
  });
}

const PASSTHROUGH = /^\/[a-z0-9][a-z0-9-]*_passthrough\//;

/** What every answer must satisfy, whatever the input. */
function checkAnswer(r: Fuzzed, a: Answer): void {
  stats.requests++;
  stats.statuses[a.status] = (stats.statuses[a.status] ?? 0) + 1;
  if (process.env.FUZZ_DEBUG) process.stdout.write(`# ${r.method} ${r.path.slice(0, 120)} ${a.status}\n`);
  const what = `${r.method} ${r.path.slice(0, 200)} -> ${a.status} ${a.text.slice(0, 300)}`;
  assert.equal(stack.gateway.process.exitCode, null, `gateway exited after ${what}`);
  assert.ok(a.status >= 200 && a.status < 600 && (a.status < 300 || a.status >= 400 || a.status === 304), `status out of range: ${what}`);
  if (a.status < 400 || r.method === 'HEAD') return;
  // A passthrough relays the provider's own error answer as it is.
  if (PASSTHROUGH.test(r.path) && !/"is_bifrost_error":true/.test(a.text)) return;
  let body: { error?: { message?: unknown; type?: unknown }; message?: unknown };
  try {
    body = JSON.parse(a.text) as typeof body;
  } catch {
    assert.fail(`error answer is not JSON: ${what}`);
  }
  const message = body?.error?.message ?? body?.message;
  assert.equal(typeof message, 'string', `error answer carries an error message: ${what}`);
  // A 500 of our own making means a handler threw on input it should have refused.
  assert.ok(!(a.status === 500 && /internal error/.test(String(message))), `internal error: ${what}`);
}

async function checkHealth(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const t = performance.now();
    const a = await sendH1({ method: 'GET', path: '/health', headers: {}, body: undefined });
    const ms = performance.now() - t;
    assert.equal(a.status, 200, `/health: ${a.text}`);
    stats.healthMaxMs = Math.max(stats.healthMaxMs, attempt === 0 ? ms : 0);
    // Two retries absorb scheduling hiccups of a loaded test machine; a blocked loop fails all three.
    if (ms < HEALTH_MS) return;
    assert.ok(attempt < 2, `/health took ${ms.toFixed(0)} ms (limit ${HEALTH_MS})`);
  }
}

/** Where the current test's share of the gateway log starts (a failure is reported once, by its own test). */
let logMark = 0;
beforeEach(() => (logMark = stack.gateway.logs().length));

function noUncaught(): void {
  const bad = stack.gateway
    .logs()
    .slice(logMark)
    .split('\n')
    .filter((l) => /uncaught exception|unhandled promise rejection|unhandled error in handler/.test(l));
  assert.deepEqual(bad, [], 'nothing slipped past the request handlers');
}

/** Runs one property: each input sent and checked, /health and the log checked every 25 inputs. */
async function fuzz(arb: fc.Arbitrary<Fuzzed>, send: (r: Fuzzed) => Promise<Answer>, runs = RUNS): Promise<void> {
  let n = 0;
  await assertTruncated(
    fc.asyncProperty(arb, async (r) => {
      checkAnswer(r, await send(r));
      if (++n % 25 === 0) {
        await checkHealth();
        noUncaught();
      }
    }),
    { seed: SEED, numRuns: runs, endOnFailure: true },
  );
  await checkHealth();
  noUncaught();
}

/** fast-check's report prints the whole counterexample; a 100 kB body would bury the reason. */
async function assertTruncated<T>(property: fc.IAsyncProperty<T>, params: fc.Parameters<T>): Promise<void> {
  try {
    await fc.assert(property, params);
  } catch (err) {
    const message = (err as Error).message;
    throw new Error(message.length > 4000 ? `${message.slice(0, 2000)}\n[... ${message.length - 4000} characters ...]\n${message.slice(-2000)}` : message);
  }
}

// ---------------------------------------------------------------------------------------------

test('every route and method, once each with a random request, over HTTP/1.1 and h2c', async () => {
  const inputs = fc.sample(fc.tuple(queryArb, headersArb, bodyArb), { seed: SEED, numRuns: ROUTES.length * 2 });
  let i = 0;
  for (const route of ROUTES) {
    // The route's methods and one it does not serve.
    for (const method of [...route.methods, METHODS.find((m) => !route.methods.includes(m))!]) {
      const [query, headers, body] = inputs[i++ % inputs.length];
      const r: Fuzzed = { method, path: route.path + query, headers, body: method === 'GET' || method === 'DELETE' || method === 'OPTIONS' ? undefined : body };
      if (process.env.FUZZ_DEBUG) process.stdout.write(`# > ${method} ${r.path.slice(0, 120)} ${JSON.stringify(headers)} ${String(body).slice(0, 100)}\n`);
      checkAnswer(r, await sendH1(r));
      checkAnswer(r, await sendH2(r));
    }
  }
  await checkHealth();
  noUncaught();
});

test('random paths, queries, headers and bodies around the route table over HTTP/1.1', async () => {
  await fuzz(requestArb(ROUTES, anyMethod), sendH1);
});

test('random paths, queries, headers and bodies around the route table over h2c', async () => {
  await fuzz(requestArb(ROUTES, anyMethod), sendH2);
});

test('random paths and bodies on the management API (/api, HTTP/1.1)', async () => {
  // JSON, as /api writes require it; random bodies test its parser and validators.
  const api = requestArb(API_ROUTES, anyMethod).map((r) => ({ ...r, headers: { ...r.headers, 'content-type': r.headers['content-type'] ?? 'application/json' } }));
  await fuzz(api, sendH1, Math.ceil(RUNS / 2));
});

test('raw garbage on HTTP/1.1 connections is refused and the connection closed', async () => {
  const garbage = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.constantFrom('GET / HTTP/9.9\r\n\r\n', 'GET /health HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n\r\n', 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', 'GET /%%% HTTP/1.1\r\n\r\n', 'GET /v1/files/% HTTP/1.1\r\nhost: x\r\n\r\n'),
  );
  await assertTruncated(
    fc.asyncProperty(garbage, async (bytes) => {
      await new Promise<void>((resolve) => {
        const socket = netConnect(stack.gateway.port, '127.0.0.1');
        socket.on('error', () => undefined);
        // A partial request would wait for its headers: the answer (if any) comes at once, so do not wait long.
        socket.setTimeout(500, () => socket.destroy());
        socket.once('close', () => resolve());
        socket.end(Buffer.from(bytes, 'latin1'));
        socket.resume();
      });
      assert.equal(stack.gateway.process.exitCode, null);
    }),
    { seed: SEED, numRuns: 60, endOnFailure: true },
  );
  await checkHealth();
  noUncaught();
});

// ---------------------------------------------------------------------------------------------
// WebSocket frames on the realtime and Responses sockets: whatever a client sends, the gateway
// either relays it (a valid event) or answers an `error` event naming the problem and closes that
// socket with a close code; nothing else is affected and the process stays up.

const REALTIME_TYPES = ['session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'conversation.item.create', 'response.create', 'response.cancel'];
const frameArb = fc.oneof(
  fc.string({ maxLength: 200 }).map((text) => ({ data: text as string | Buffer, binary: false })),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ data: Buffer.from(bytes) as string | Buffer, binary: true })),
  fc.json({ maxDepth: 4 }).map((text) => ({ data: text as string | Buffer, binary: false })),
  fc
    .record({ type: fc.oneof(fc.constantFrom(...REALTIME_TYPES, 'response.explode', ''), fc.string({ maxLength: 30 })), extra: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }) })
    .map(({ type, extra }) => ({ data: JSON.stringify({ ...extra, type }) as string | Buffer, binary: false })),
);

/** Sends one frame on a fresh socket; answers how the socket ended (or that it is still open) and the events it got. */
async function sendFrame(path: string, frame: { data: string | Buffer; binary: boolean }): Promise<{ code: number | undefined; events: { type?: string; error?: { code?: string }; code?: string }[] }> {
  const { WebSocket } = await import('ws');
  const ws = new WebSocket(`${stack.gateway.url.replace(/^http/, 'ws')}${path}`);
  const events: { type?: string; error?: { code?: string }; code?: string }[] = [];
  ws.on('message', (d: Buffer) => {
    try {
      events.push(JSON.parse(d.toString()) as (typeof events)[number]);
    } catch {
      events.push({ type: 'unparsable' });
    }
  });
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake on ${path} answered ${res.statusCode}`)));
  });
  const closed = new Promise<number>((resolve) => ws.once('close', (code: number) => resolve(code)));
  ws.send(frame.data, { binary: frame.binary });
  const code = await Promise.race([closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 150))]);
  if (code === undefined) {
    ws.close();
    await closed;
  }
  return { code, events };
}

test('random frames on the realtime and Responses WebSockets end only their socket, with an error event', async () => {
  let n = 0;
  await assertTruncated(
    fc.asyncProperty(fc.constantFrom('/v1/realtime?model=openai/gpt-realtime', '/v1/responses'), frameArb, async (path, frame) => {
      const { code, events } = await sendFrame(path, frame);
      if (code !== undefined) {
        // Closed by the gateway: a close code for bad data or policy, an error event naming why first.
        assert.ok([1003, 1007, 1008, 1009].includes(code), `close code ${code} for ${String(frame.data).slice(0, 80)}`);
        const error = events.findLast((e) => e.type === 'error');
        assert.ok(error?.error?.code ?? error?.code, `no error event before close ${code}: ${JSON.stringify(events).slice(0, 300)}`);
      }
      assert.equal(stack.gateway.process.exitCode, null);
      if (++n % 20 === 0) await checkHealth();
    }),
    { seed: SEED, numRuns: Math.min(80, RUNS), endOnFailure: true },
  );
  await checkHealth();
  noUncaught();
});

// ---------------------------------------------------------------------------------------------
// One request body everywhere (docs/security.md): on every route with a JSON example, a
// `__proto__`, `constructor` or `prototype` member at the top and at one nested place, holding
// fields a translator would read (a hidden system prompt, instructions, max_tokens) with a marker.
// `__proto__` is refused with a 400 naming it and nothing reaches the provider. For the others,
// whatever reaches the provider is also in the cache identity and the log: a marker the upstream
// received is in the logged request, and the same request without the member is not answered
// from the cache entry the marked one wrote.

describe('prototype-named members: the upstream request, the cache key and the log agree', () => {
  let own: Stack;
  before(async () => {
    own = await startStack((u) => ({
      providers: mockProviders(u),
      client: { enable_logging: true },
      vector_store: { enabled: true, type: 'sqlite' },
      // Direct-only; the examples' conversations (four chat messages) are cached too.
      plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m', conversation_history_threshold: 100 } }],
    }));
  });
  after(async () => {
    await own?.close();
  });

  const MEMBERS = ['__proto__', 'constructor', 'prototype'];
  const ASYNC = /\/async\//;
  const steering = (marker: string) => ({ instructions: marker, system: marker, name: marker, text: marker, user: marker, description: marker, max_tokens: 1, max_output_tokens: 16 });
  /** `a.b[0].c`: how the gateway names a place in a body. */
  const pathName = (path: (string | number)[]) => path.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${k}` : k), '');

  async function post(path: string, body: string, cacheKey: string): Promise<Answer> {
    const res = await fetch(`${own.gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-bf-cache-key': cacheKey },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, text: await res.text() };
  }

  async function loggedInput(marker: string): Promise<string> {
    let input = '';
    await eventually(async () => {
      const res = await fetch(`${own.gateway.url}/api/logs?content_search=${marker}&limit=5`);
      const { logs } = (await res.json()) as { logs: { id: string }[] };
      assert.ok(logs.length > 0, `no log record holds ${marker} yet`);
      const full = (await (await fetch(`${own.gateway.url}/api/logs/${logs[0].id}`)).json()) as { raw_request?: string };
      input = full.raw_request ?? '';
    }, 10_000);
    return input;
  }

  test('on every JSON route: __proto__ is refused, a member the provider gets is in the cache key and the log', async () => {
    // A passthrough relays the caller's bytes unread and uncached: nothing there copies a body.
    const routes = ROUTES.filter((r) => r.methods.includes('POST') && exampleFor(r.path) !== undefined && !PASSTHROUGH.test(r.path));
    assert.ok(routes.length > 100, `JSON routes found: ${routes.length}`);
    const reached: { marker: string; what: string }[] = [];
    let refused = 0;
    const families = new Map<unknown, number>();
    for (const [i, route] of routes.entries()) {
      // Every other route of a family calls Anthropic: its translator reads fields one by one,
      // where an OpenAI upstream gets a copy of the request's own fields.
      const family = exampleFor(route.path)!;
      const seen = (families.get(family) ?? 0) + 1;
      families.set(family, seen);
      const example = structuredClone(family) as Record<string, unknown>;
      if (example.model === 'openai/gpt-4o' && seen % 2 === 0) example.model = 'anthropic/claude-sonnet-4-5';
      const objects = placesIn(example).filter((p) => {
        const v = p.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], example);
        return p.length > 0 && v !== null && typeof v === 'object' && !Array.isArray(v);
      });
      // The top and one nested object, a different one for each route of the same family.
      for (const place of objects.length ? [[], objects[i % objects.length]] : [[]]) {
        for (const member of MEMBERS) {
          // No marker is a prefix of another (the log is searched by substring).
          const marker = `mk${i}z${place.length}m${MEMBERS.indexOf(member)}q`;
          const doc = structuredClone(example) as Record<string | number, unknown>;
          const target = place.reduce<Record<string | number, unknown>>((o, k) => o[k] as Record<string | number, unknown>, doc);
          // defineProperty: an assignment to `__proto__` would not make a member at all.
          Object.defineProperty(target, member, { value: steering(marker), enumerable: true, writable: true, configurable: true });
          const key = `fz-${marker}`;
          const what = `${route.path} with ${member} at ${pathName(place) || '(top)'}`;
          const sent = own.mock.requests.length;
          const a = await post(route.path, JSON.stringify(doc), key);
          const upstream = own.mock.requests.slice(sent);
          const carries = (r: { body?: unknown }) => JSON.stringify(r.body ?? '').includes(marker);
          if (member === '__proto__') {
            refused++;
            assert.equal(a.status, 400, `${what}: ${a.text.slice(0, 300)}`);
            const named = pathName([...place, '__proto__']);
            assert.ok(a.text.includes(`${named}: '__proto__' is not allowed`), `${what}: the error names ${named}: ${a.text.slice(0, 300)}`);
            assert.ok(!upstream.some(carries), `${what}: nothing of it reaches the provider`);
          }
          // An async job is called later, by then among other jobs' calls: its submission is what is checked.
          if (ASYNC.test(route.path) || !upstream.some(carries)) continue;
          reached.push({ marker, what });
          // The entry is written once the answer has gone out: wait until the marked request is
          // itself a hit (when its operation is cached at all), so the next check is not vacuous.
          for (let tries = 0; a.status < 300 && tries < 20; tries++) {
            const calls = own.mock.requests.length;
            await post(route.path, JSON.stringify(doc), key);
            if (own.mock.requests.length === calls) break;
            await new Promise((r) => setTimeout(r, 50));
          }
          const before = own.mock.requests.length;
          const plain = await post(route.path, JSON.stringify(example), key);
          assert.ok(own.mock.requests.length > before, `${what}: the request without the member is not answered from the marked one's cache entry (${plain.status} ${plain.text.slice(0, 200)})`);
        }
      }
    }
    // The log is written in batches: checked once all were sent.
    for (const { marker, what } of reached) assert.ok((await loggedInput(marker)).includes(marker), `${what}: the provider got ${marker}, so the logged request holds it`);
    process.stdout.write(`# ${routes.length} JSON routes, ${refused} __proto__ members refused, ${reached.length} members that reached the provider checked against the log and the cache\n`);
    assert.ok(reached.length > 0, 'some constructor/prototype members reach the provider (as plain fields) and were checked');
  });
});
