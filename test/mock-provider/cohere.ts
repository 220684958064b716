// Cohere API v2 wire format: Chat (JSON and typed SSE events, tools, thinking), Embed, Rerank, and
// the v1 Models list. Errors are `{id, message}`; requests are validated strictly, unknown fields
// rejected, as the real API does.

import { isNonexistentModel } from './models.ts';
import { modelDimensions } from './embeddings.ts';
import { json, sse } from './reply.ts';
import { namedEvent, SSE_HEADERS } from './sse.ts';
import {
  countWords, embed, embedBase64, isObject, replyText, splitPieces, splitWords, thinkingText, toolReplyText, truncate,
} from './text.ts';
import type { ErrorExtra, FormatModule, JsonObject, Reply, RequestContext, Route } from './types.ts';

// ---------------------------------------------------------------- errors

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'invalid request',
  401: 'invalid api token',
  402: 'Please add or update your payment method.',
  404: 'not found',
  422: 'unprocessable entity',
  429: 'You are using a Trial key, which is limited to 10 API calls / minute.',
  500: 'internal server error, this has been reported to our developers',
  503: 'service unavailable',
};

let errorCounter = 0;

export function cohereError(status: number, message?: string, extra: ErrorExtra = {}): Reply {
  const id = `mock-err-${(++errorCounter).toString(36).padStart(8, '0')}`;
  return json(status, { id, message: message ?? DEFAULT_MESSAGES[status] ?? `request failed with status ${status}` }, extra.headers);
}

const bad = (message: string): Reply => cohereError(400, `invalid request: ${message}`);

function isReply(v: unknown): v is Reply {
  return isObject(v) && (v.kind === 'json' || v.kind === 'sse');
}

// ---------------------------------------------------------------- models

interface CohereModel {
  name: string;
  endpoints: string[];
  finetuned: boolean;
  context_length: number;
  tokenizer_url: string;
  default_endpoints: string[];
  features: string[] | null;
}

const model = (name: string, endpoints: string[], context: number, features: string[] | null = null): CohereModel => ({
  name,
  endpoints,
  finetuned: false,
  context_length: context,
  tokenizer_url: `https://storage.googleapis.com/cohere-public/tokenizers/${name}.json`,
  default_endpoints: [],
  features,
});

export const COHERE_MODELS: CohereModel[] = [
  model('command-a-03-2025', ['generate', 'chat', 'summarize'], 256000, ['tools', 'json_mode', 'json_schema']),
  model('command-a-reasoning-08-2025', ['chat'], 256000, ['tools', 'json_mode', 'reasoning']),
  model('command-r-plus', ['generate', 'chat', 'summarize'], 128000, ['tools', 'json_mode']),
  model('command-r', ['generate', 'chat', 'summarize'], 128000, ['tools', 'json_mode']),
  model('embed-v4.0', ['embed'], 128000),
  model('embed-english-v3.0', ['embed'], 512),
  model('rerank-v3.5', ['rerank'], 4096),
  model('rerank-english-v3.0', ['rerank'], 4096),
];

/** A model the mock knows and its endpoints; unknown names pass (fine-tunes), `nonexistent*` 404s. */
function checkModel(body: JsonObject, endpoint: string): string | Reply {
  const m = body.model;
  if (m === undefined || m === null) return bad('model is required');
  if (typeof m !== 'string' || m === '') return bad('model must be a non-empty string');
  if (isNonexistentModel(m)) return cohereError(404, `model '${m}' not found, make sure the correct model ID was used and that you have access to the model.`);
  const known = COHERE_MODELS.find((x) => x.name === m);
  if (known && !known.endpoints.includes(endpoint)) return bad(`model '${m}' does not support the ${endpoint} endpoint`);
  return m;
}

function listModels(query: Record<string, string>): Reply {
  let size = 20;
  if (query.page_size !== undefined) {
    size = Number(query.page_size);
    if (!Number.isInteger(size) || size < 1 || size > 1000) return bad('page_size must be an integer between 1 and 1000');
  }
  let start = 0;
  if (query.page_token !== undefined && query.page_token !== '') {
    start = Number(query.page_token);
    if (!Number.isInteger(start) || start < 0) return bad('invalid page_token');
  }
  const all = query.endpoint ? COHERE_MODELS.filter((m) => m.endpoints.includes(query.endpoint)) : COHERE_MODELS;
  const models = all.slice(start, start + size);
  return json(200, start + size < all.length ? { models, next_page_token: String(start + size) } : { models });
}

// ---------------------------------------------------------------- chat

const CHAT_PARAMS = new Set([
  'model', 'messages', 'stream', 'tools', 'strict_tools', 'documents', 'citation_options', 'response_format', 'safety_mode',
  'max_tokens', 'stop_sequences', 'temperature', 'seed', 'frequency_penalty', 'presence_penalty', 'k', 'p', 'return_prompt',
  'logprobs', 'tool_choice', 'thinking', 'priority',
]);

interface Analysis {
  allText: string[];
  images: number;
  lastUserText: string;
  /** Results of the trailing tool messages, when the conversation ends with them. */
  toolResults: string[] | null;
}

function textContent(c: unknown, p: string, allowImages: boolean, a: Analysis): string | Reply {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return bad(`${p}.content must be a string or a list of content items`);
  const parts: string[] = [];
  for (let k = 0; k < c.length; k++) {
    const item: unknown = c[k];
    const ip = `${p}.content[${k}]`;
    if (!isObject(item)) return bad(`${ip} must be an object`);
    if (item.type === 'text') {
      if (typeof item.text !== 'string') return bad(`${ip}.text is required`);
      parts.push(item.text);
    } else if (item.type === 'image_url' && allowImages) {
      if (!isObject(item.image_url) || typeof item.image_url.url !== 'string' || item.image_url.url === '') return bad(`${ip}.image_url.url is required`);
      a.images++;
    } else if (item.type === 'thinking' && p.includes('assistant')) {
      if (typeof item.thinking !== 'string') return bad(`${ip}.thinking is required`);
    } else if (item.type === 'document' && p.includes('tool')) {
      parts.push(JSON.stringify(item.document ?? {}));
    } else {
      return bad(`${ip}.type '${String(item.type)}' is not a valid content type`);
    }
  }
  return parts.join(' ');
}

function analyze(messages: unknown): Analysis | Reply {
  if (messages === undefined) return bad('messages is required');
  if (!Array.isArray(messages) || messages.length === 0) return bad('messages must be a non-empty list');
  const a: Analysis = { allText: [], images: 0, lastUserText: '', toolResults: null };
  const pending = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isObject(m)) return bad(`messages[${i}] must be an object`);
    const role = m.role;
    const p = `messages[${i}](${String(role)})`;
    switch (role) {
      case 'system':
      case 'user': {
        if (m.content === undefined) return bad(`${p}.content is required`);
        const t = textContent(m.content, p, role === 'user', a);
        if (isReply(t)) return t;
        a.allText.push(t);
        if (role === 'user') {
          if (pending.size > 0) return bad(`messages[${i}]: tool call ids ${[...pending].join(', ')} have no tool message answering them`);
          a.lastUserText = t;
          a.toolResults = null;
        }
        break;
      }
      case 'assistant': {
        if (pending.size > 0) return bad(`messages[${i}]: tool call ids ${[...pending].join(', ')} have no tool message answering them`);
        const calls = m.tool_calls;
        if (m.content === undefined && (calls === undefined || calls === null)) return bad(`${p} must have content or tool_calls`);
        if (m.content !== undefined && m.content !== null) {
          const t = textContent(m.content, p, false, a);
          if (isReply(t)) return t;
          a.allText.push(t);
        }
        if (m.tool_plan !== undefined && typeof m.tool_plan !== 'string') return bad(`${p}.tool_plan must be a string`);
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls)) return bad(`${p}.tool_calls must be a list`);
          for (let k = 0; k < calls.length; k++) {
            const c: unknown = calls[k];
            const cp = `${p}.tool_calls[${k}]`;
            if (!isObject(c) || typeof c.id !== 'string' || c.id === '') return bad(`${cp}.id is required`);
            if (c.type !== 'function') return bad(`${cp}.type must be 'function'`);
            if (!isObject(c.function) || typeof c.function.name !== 'string') return bad(`${cp}.function.name is required`);
            if (typeof c.function.arguments !== 'string') return bad(`${cp}.function.arguments must be a JSON string`);
            try {
              JSON.parse(c.function.arguments);
            } catch {
              return bad(`${cp}.function.arguments is not valid JSON`);
            }
            pending.add(c.id);
          }
        }
        a.toolResults = null;
        break;
      }
      case 'tool': {
        if (typeof m.tool_call_id !== 'string' || m.tool_call_id === '') return bad(`${p}.tool_call_id is required`);
        if (!pending.has(m.tool_call_id)) return bad(`${p}: tool_call_id '${m.tool_call_id}' does not match a tool call of the previous assistant message`);
        pending.delete(m.tool_call_id);
        if (m.content === undefined) return bad(`${p}.content is required`);
        const t = textContent(m.content, p, false, a);
        if (isReply(t)) return t;
        a.allText.push(t);
        (a.toolResults ??= []).push(t);
        break;
      }
      default:
        return bad(`messages[${i}].role must be one of system, user, assistant, tool`);
    }
  }
  if (pending.size > 0) return bad(`tool call ids ${[...pending].join(', ')} have no tool message answering them`);
  return a;
}

function toolNames(tools: unknown): string[] | Reply {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) return bad('tools must be a list');
  const names: string[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    if (!isObject(t)) return bad(`tools[${i}] must be an object`);
    if (t.type !== 'function') return bad(`tools[${i}].type must be 'function'`);
    if (!isObject(t.function)) return bad(`tools[${i}].function is required`);
    if (typeof t.function.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.function.name)) return bad(`tools[${i}].function.name is invalid`);
    if (!isObject(t.function.parameters)) return bad(`tools[${i}].function.parameters is required`);
    names.push(t.function.name);
  }
  return names;
}

function numberIn(body: JsonObject, key: string, lo: number, hi: number, integer = false): Reply | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || (integer && !Number.isInteger(v))) return bad(`${key} must be ${integer ? 'an integer' : 'a number'}`);
  if (v < lo || v > hi) return bad(`${key} must be between ${lo} and ${hi}`);
  return undefined;
}

interface Checked {
  body: JsonObject;
  model: string;
  analysis: Analysis;
  tool: string | undefined;
  thinking: boolean;
}

function checkChat(ctx: RequestContext): Checked | Reply {
  if (ctx.badJson) return bad('body is not valid JSON');
  const body = ctx.body;
  if (!isObject(body)) return bad('body must be a JSON object');
  for (const k of Object.keys(body)) if (!CHAT_PARAMS.has(k)) return bad(`unknown field: parameter '${k}' is not a valid field`);
  const model = checkModel(body, 'chat');
  if (isReply(model)) return model;
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return bad('stream must be a boolean');
  for (const r of [
    numberIn(body, 'max_tokens', 1, 1_000_000, true),
    numberIn(body, 'temperature', 0, 5),
    numberIn(body, 'p', 0.01, 0.99),
    numberIn(body, 'k', 0, 500, true),
    numberIn(body, 'frequency_penalty', 0, 1),
    numberIn(body, 'presence_penalty', 0, 1),
    numberIn(body, 'seed', -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true),
  ]) if (r) return r;
  const stops = body.stop_sequences;
  if (stops !== undefined && !(Array.isArray(stops) && stops.length <= 5 && stops.every((s) => typeof s === 'string'))) {
    return bad('stop_sequences must be a list of at most 5 strings');
  }
  const rf = body.response_format;
  if (rf !== undefined && !(isObject(rf) && (rf.type === 'text' || rf.type === 'json_object'))) return bad("response_format.type must be 'text' or 'json_object'");
  let thinking = false;
  const th = body.thinking;
  if (th !== undefined && th !== null) {
    if (!isObject(th) || (th.type !== 'enabled' && th.type !== 'disabled')) return bad("thinking.type must be 'enabled' or 'disabled'");
    if (th.token_budget !== undefined && !(Number.isInteger(th.token_budget) && (th.token_budget as number) >= 1)) return bad('thinking.token_budget must be a positive integer');
    thinking = th.type === 'enabled';
  }
  const analysis = analyze(body.messages);
  if (isReply(analysis)) return analysis;
  const names = toolNames(body.tools);
  if (isReply(names)) return names;
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== 'REQUIRED' && choice !== 'NONE') return bad("tool_choice must be 'REQUIRED' or 'NONE'");
  if (choice !== undefined && names.length === 0) return bad('tool_choice requires tools');
  const tool = choice === 'NONE' ? undefined : names[0];
  return { body, model, analysis, tool, thinking };
}

function chat(ctx: RequestContext): Reply {
  const c = checkChat(ctx);
  if (isReply(c)) return c;
  const { body, analysis: a, tool, thinking } = c;
  const toolTurn = a.toolResults !== null;
  const subject = toolTurn ? toolReplyText(a.toolResults ?? []) : a.lastUserText;
  const callTool = tool !== undefined && !toolTurn;
  const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
  const stops = Array.isArray(body.stop_sequences) ? (body.stop_sequences as string[]) : [];
  const t = truncate(toolTurn ? subject : replyText(a.lastUserText, a.images), maxTokens, stops);
  const thought = thinking ? thinkingText(subject) : undefined;
  const args = JSON.stringify({ query: a.lastUserText });
  const plan = callTool ? `I will call ${tool} to answer this.` : undefined;
  const toolCall = { id: `${tool}_${ctx.nextId()}`, type: 'function', function: { name: tool, arguments: args } };
  const finish = callTool ? 'TOOL_CALL' : t.reason === 'length' ? 'MAX_TOKENS' : t.reason === 'stop_sequence' ? 'STOP_SEQUENCE' : 'COMPLETE';
  const inputTokens = countWords(a.allText.join(' '));
  const outputTokens = (thought ? countWords(thought) : 0) + (callTool ? countWords(plan ?? '') + countWords(args) : countWords(t.text));
  const usage = {
    billed_units: { input_tokens: inputTokens, output_tokens: outputTokens },
    tokens: { input_tokens: inputTokens + 3, output_tokens: outputTokens },
  };
  const id = `${ctx.nextId()}-cohere`;

  if (body.stream !== true) {
    const content: JsonObject[] = [];
    if (thought) content.push({ type: 'thinking', thinking: thought });
    if (!callTool) content.push({ type: 'text', text: t.text });
    const message: JsonObject = { role: 'assistant', content };
    if (callTool) {
      message.tool_plan = plan;
      message.tool_calls = [toolCall];
    }
    return json(200, { id, message, finish_reason: finish, usage });
  }

  const events: string[] = [];
  const ev = (type: string, payload: JsonObject): void => {
    events.push(namedEvent(type, { type, ...payload }));
  };
  ev('message-start', { id, delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
  let index = 0;
  if (thought) {
    ev('content-start', { index, delta: { message: { content: { type: 'thinking', thinking: '' } } } });
    for (const w of splitWords(thought)) ev('content-delta', { index, delta: { message: { content: { thinking: w } } } });
    ev('content-end', { index });
    index++;
  }
  if (callTool) {
    for (const w of splitWords(plan ?? '')) ev('tool-plan-delta', { delta: { message: { tool_plan: w } } });
    ev('tool-call-start', { index: 0, delta: { message: { tool_calls: { ...toolCall, function: { name: tool, arguments: '' } } } } });
    for (const piece of splitPieces(args)) ev('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } });
    ev('tool-call-end', { index: 0 });
  } else {
    ev('content-start', { index, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const w of splitWords(t.text)) ev('content-delta', { index, delta: { message: { content: { text: w } } } });
    ev('content-end', { index });
  }
  ev('message-end', { delta: { finish_reason: finish, usage } });
  return sse(events, { ...SSE_HEADERS });
}

// ---------------------------------------------------------------- embed

const EMBED_PARAMS = new Set(['model', 'texts', 'images', 'inputs', 'input_type', 'embedding_types', 'output_dimension', 'max_tokens', 'truncate', 'priority']);
const INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering', 'image'];
const EMBEDDING_TYPES = ['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64'];

function packBits(v: Float32Array, signed: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < v.length; i += 8) {
    let byte = 0;
    for (let b = 0; b < 8; b++) byte = (byte << 1) | (i + b < v.length && v[i + b] > 0 ? 1 : 0);
    out.push(signed ? byte - 128 : byte);
  }
  return out;
}

function embedEndpoint(ctx: RequestContext): Reply {
  if (ctx.badJson) return bad('body is not valid JSON');
  const body = ctx.body;
  if (!isObject(body)) return bad('body must be a JSON object');
  for (const k of Object.keys(body)) if (!EMBED_PARAMS.has(k)) return bad(`unknown field: parameter '${k}' is not a valid field`);
  const model = checkModel(body, 'embed');
  if (isReply(model)) return model;
  const texts = body.texts;
  if (texts === undefined) return bad('one of texts, images or inputs must be provided');
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96 || !texts.every((t) => typeof t === 'string')) {
    return bad('texts must be a list of between 1 and 96 strings');
  }
  if (body.input_type === undefined) return bad('valid input_type must be provided with the provided model');
  if (typeof body.input_type !== 'string' || !INPUT_TYPES.includes(body.input_type)) return bad(`input_type must be one of ${INPUT_TYPES.join(', ')}`);
  const types = body.embedding_types ?? ['float'];
  if (!Array.isArray(types) || types.length === 0 || !types.every((t) => typeof t === 'string' && EMBEDDING_TYPES.includes(t))) {
    return bad(`embedding_types must be a list of ${EMBEDDING_TYPES.join(', ')}`);
  }
  let dims = modelDimensions(model);
  if (body.output_dimension !== undefined && body.output_dimension !== null) {
    const d = body.output_dimension;
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1) return bad('output_dimension must be a positive integer');
    dims = d;
  }
  const vectors = (texts as string[]).map((t) => embed(t, dims));
  const embeddings: Record<string, unknown[]> = {};
  for (const type of types as string[]) {
    embeddings[type] = vectors.map((v) => {
      switch (type) {
        case 'float': return Array.from(v);
        case 'int8': return Array.from(v, (x) => Math.round(x * 127));
        case 'uint8': return Array.from(v, (x) => Math.round((x + 1) * 127.5));
        case 'binary': return packBits(v, true);
        case 'ubinary': return packBits(v, false);
        default: return embedBase64(v);
      }
    });
  }
  const tokens = countWords((texts as string[]).join(' '));
  return json(200, {
    id: ctx.nextId(),
    texts,
    embeddings,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: tokens } },
    response_type: 'embeddings_by_type',
  });
}

// ---------------------------------------------------------------- rerank

const RERANK_PARAMS = new Set(['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc', 'priority']);

const words = (text: string): Set<string> => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** Share of the query's distinct words found in the document, nudged by document length. */
export function rerankScore(query: string, doc: string): number {
  const q = words(query);
  const d = words(doc);
  let overlap = 0;
  for (const w of q) if (d.has(w)) overlap++;
  const base = q.size > 0 ? overlap / q.size : 0;
  return Math.round((base * 0.95 + 0.05 / (1 + d.size)) * 1e6) / 1e6;
}

function rerankEndpoint(ctx: RequestContext): Reply {
  if (ctx.badJson) return bad('body is not valid JSON');
  const body = ctx.body;
  if (!isObject(body)) return bad('body must be a JSON object');
  for (const k of Object.keys(body)) if (!RERANK_PARAMS.has(k)) return bad(`unknown field: parameter '${k}' is not a valid field`);
  const model = checkModel(body, 'rerank');
  if (isReply(model)) return model;
  if (typeof body.query !== 'string' || body.query === '') return bad('query must be a non-empty string');
  const docs = body.documents;
  if (!Array.isArray(docs) || docs.length === 0) return bad('documents must be a non-empty list');
  if (docs.length > 1000) return bad('documents must contain at most 1000 items');
  if (!docs.every((d) => typeof d === 'string')) return bad('documents must be a list of strings');
  const topN = body.top_n;
  if (topN !== undefined && !(Number.isInteger(topN) && (topN as number) >= 1)) return bad('top_n must be a positive integer');
  const mtd = numberIn(body, 'max_tokens_per_doc', 1, 1_000_000, true);
  if (mtd) return mtd;
  const query = body.query;
  const results = (docs as string[])
    .map((d, index) => ({ index, relevance_score: rerankScore(query, d) }))
    .sort((x, y) => y.relevance_score - x.relevance_score || x.index - y.index)
    .slice(0, typeof topN === 'number' ? topN : undefined);
  return json(200, { id: ctx.nextId(), results, meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } });
}

// ---------------------------------------------------------------- module

function bodyModel(body: unknown): string | undefined {
  return isObject(body) && typeof body.model === 'string' ? body.model : undefined;
}

function header(ctx: RequestContext, name: string): string | undefined {
  const v = ctx.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : undefined;
}

export const cohere: FormatModule = {
  format: 'cohere',
  route(method, path, body): Route | undefined {
    if (method === 'POST') {
      if (path === '/v2/chat') return { model: bodyModel(body), handle: chat };
      if (path === '/v2/embed') return { model: bodyModel(body), handle: embedEndpoint };
      if (path === '/v2/rerank') return { model: bodyModel(body), handle: rerankEndpoint };
      return undefined;
    }
    if (method === 'GET' && path === '/v1/models') return { model: undefined, handle: (ctx) => listModels(ctx.query) };
    return undefined;
  },
  authenticate(ctx) {
    const auth = header(ctx, 'authorization');
    if (!auth) return cohereError(401, 'no api key supplied');
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!bearer || bearer[1].startsWith('invalid')) return cohereError(401, 'invalid api token');
    return undefined;
  },
  error: cohereError,
  notFound(method, path) {
    return cohereError(404, `${method} ${path} not found`);
  },
};
