// Gemini (Generative Language API) wire format: generateContent, streamGenerateContent, embedContent,
// batchEmbedContents, countTokens, models list/get. Proto-JSON field names are accepted in lowerCamelCase
// and snake_case, as the real API does; unknown fields are rejected like the real API.

import { GEMINI_MODELS, isNonexistentModel } from './models.ts';
import { modelDimensions } from './embeddings.ts';
import { json, rawJson, sse } from './reply.ts';
import { geminiEvent, SSE_HEADERS } from './sse.ts';
import {
  countWords, embed, isObject, replyText, splitWords, stopList, thinkingText, toolReplyText, truncate,
} from './text.ts';
import type { ErrorExtra, FormatModule, JsonObject, Reply, RequestContext, Route } from './types.ts';
import { geminiVideoRoute } from './videos.ts';

// ---------------------------------------------------------------- errors

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  412: 'FAILED_PRECONDITION',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Request contains an invalid argument.',
  401: 'Request had invalid authentication credentials.',
  403: 'The caller does not have permission',
  404: 'Requested entity was not found.',
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'Deadline expired before operation could complete.',
};

export function geminiError(status: number, message?: string, extra: ErrorExtra = {}): Reply {
  const error: JsonObject = {
    code: status,
    message: message ?? DEFAULT_MESSAGES[status] ?? `Request failed with status ${status}.`,
    status: extra.type ?? STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'UNKNOWN'),
  };
  const retry = extra.headers?.['retry-after'];
  if (retry !== undefined) error.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retry}s` }];
  if (extra.code) {
    error.details = [{
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: extra.code, domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    }];
  }
  return json(status, { error }, { 'content-type': 'application/json; charset=UTF-8', ...extra.headers });
}

function bad(message: string): Reply {
  return geminiError(400, message);
}

function isReply(v: unknown): v is Reply {
  return isObject(v) && (v.kind === 'json' || v.kind === 'sse');
}

// ---------------------------------------------------------------- proto-JSON helpers

function toCamel(k: string): string {
  return k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function toSnake(k: string): string {
  return k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Field by its lowerCamel name, also accepting the snake_case spelling. */
function f(obj: JsonObject, camel: string): unknown {
  const v = obj[camel];
  return v !== undefined ? v : obj[toSnake(camel)];
}

/** Rejects fields the message type does not have (`at` is the snake_case path, '' for the root). */
function unknownFields(obj: JsonObject, allowed: Set<string>, at: string): Reply | undefined {
  for (const k of Object.keys(obj)) {
    if (!allowed.has(toCamel(k))) {
      return bad(`Invalid JSON payload received. Unknown name "${k}"${at ? ` at '${at}'` : ''}: Cannot find field.`);
    }
  }
  return undefined;
}

const REQUEST_FIELDS = new Set([
  'model', 'contents', 'tools', 'toolConfig', 'safetySettings', 'systemInstruction', 'generationConfig',
  'cachedContent', 'labels', 'serviceTier', 'store', 'modelArmorConfig', 'outputConfig', 'continuationToken',
]);
const GENERATION_CONFIG_FIELDS = new Set([
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities',
  'candidateCount', 'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty',
  'responseLogprobs', 'logprobs', 'enableEnhancedCivicAnswers', 'speechConfig', 'thinkingConfig', 'imageConfig',
  'mediaResolution', 'audioTimestamp', 'routingConfig', 'modelConfig', 'audioTranscriptionConfig',
  'enableAffectiveDialog',
]);
const THINKING_FIELDS = new Set(['includeThoughts', 'thinkingBudget', 'thinkingLevel']);
const CONTENT_FIELDS = new Set(['role', 'parts']);
const PART_FIELDS = new Set([
  'text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult',
  'toolCall', 'toolResponse', 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution',
]);
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse'];
const TOOL_FIELDS = new Set([
  'functionDeclarations', 'googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'computerUse',
  'fileSearch', 'googleMaps', 'retrieval', 'enterpriseWebSearch', 'mcpServers',
]);
const DECLARATION_FIELDS = new Set(['name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior']);
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const EMBED_FIELDS = new Set(['model', 'content', 'taskType', 'title', 'outputDimensionality']);

// ---------------------------------------------------------------- contents

interface PartsInfo {
  texts: string[];
  images: number;
  calls: number;
  responses: string[];
}

function parts(content: unknown, at: string, req: string): PartsInfo | Reply {
  if (!isObject(content)) return bad(`Invalid value at '${at}', expected an object.`);
  const unknown = unknownFields(content, CONTENT_FIELDS, at);
  if (unknown) return unknown;
  const ps = f(content, 'parts');
  if (!Array.isArray(ps) || ps.length === 0) return bad(`* ${req}.parts: contents.parts must not be empty.\n`);
  const info: PartsInfo = { texts: [], images: 0, calls: 0, responses: [] };
  for (let j = 0; j < ps.length; j++) {
    const p: unknown = ps[j];
    const pat = `${at}.parts[${j}]`;
    if (!isObject(p)) return bad(`Invalid value at '${pat}', expected an object.`);
    const unknownPart = unknownFields(p, PART_FIELDS, pat);
    if (unknownPart) return unknownPart;
    const set = PART_DATA.filter((k) => f(p, k) !== undefined);
    if (set.length === 0) return bad(`* ${req}.parts[${j}].data: required oneof field 'data' must have one initialized field\n`);
    if (set.length > 1) return bad(`Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '${toSnake(set[1])}'`);
    const text = f(p, 'text');
    if (text !== undefined) {
      if (typeof text !== 'string') return bad(`Invalid value at '${pat}.text' (TYPE_STRING), ${JSON.stringify(text)}`);
      if (f(p, 'thought') !== true) info.texts.push(text);
      continue;
    }
    const inline = f(p, 'inlineData');
    if (inline !== undefined) {
      if (!isObject(inline) || typeof f(inline, 'mimeType') !== 'string' || typeof f(inline, 'data') !== 'string') {
        return bad(`* ${req}.parts[${j}].inline_data.mime_type: Required field is not set.\n`);
      }
      info.images++;
      continue;
    }
    const file = f(p, 'fileData');
    if (file !== undefined) {
      if (!isObject(file) || typeof f(file, 'fileUri') !== 'string') return bad(`* ${req}.parts[${j}].file_data.file_uri: Required field is not set.\n`);
      info.images++;
      continue;
    }
    const call = f(p, 'functionCall');
    if (call !== undefined) {
      if (!isObject(call) || typeof call.name !== 'string' || !call.name) return bad(`* ${req}.parts[${j}].function_call.name: Name cannot be empty.\n`);
      info.calls++;
      info.texts.push(JSON.stringify(call.args ?? {}));
      continue;
    }
    const resp = f(p, 'functionResponse');
    if (resp !== undefined) {
      if (!isObject(resp) || typeof resp.name !== 'string' || !resp.name) return bad(`* ${req}.parts[${j}].function_response.name: Name cannot be empty.\n`);
      const r = resp.response;
      if (r !== undefined && !isObject(r)) return bad(`Invalid value at '${pat}.function_response.response' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(r)}`);
      const text = resultText(r);
      info.responses.push(text);
      info.texts.push(text);
    }
  }
  return info;
}

/** A function response's "result content": result/output/content string field, else the JSON. */
function resultText(r: unknown): string {
  if (!isObject(r)) return '';
  for (const k of ['result', 'output', 'content']) if (typeof r[k] === 'string') return r[k] as string;
  return JSON.stringify(r);
}

interface Analysis {
  allText: string[];
  images: number;
  lastUserText: string;
  toolResults: string[] | null;
}

function analyze(body: JsonObject): Analysis | Reply {
  const a: Analysis = { allText: [], images: 0, lastUserText: '', toolResults: null };
  const sys = f(body, 'systemInstruction');
  if (sys !== undefined && sys !== null) {
    const info = parts(sys, 'system_instruction', 'GenerateContentRequest.system_instruction');
    if (isReply(info)) return info;
    a.allText.push(...info.texts);
  }
  const contents = body.contents;
  if (contents === undefined || contents === null || (Array.isArray(contents) && contents.length === 0)) {
    return bad('* GenerateContentRequest.contents: contents is not specified\n');
  }
  if (!Array.isArray(contents)) return bad(`Invalid value at 'contents', expected a list.`);
  let prevRole = '';
  let prevCalls = 0;
  for (let i = 0; i < contents.length; i++) {
    const c: unknown = contents[i];
    const info = parts(c, `contents[${i}]`, `GenerateContentRequest.contents[${i}]`);
    if (isReply(info)) return info;
    const rawRole = isObject(c) ? c.role : undefined;
    if (rawRole !== undefined && rawRole !== '' && rawRole !== 'user' && rawRole !== 'model') {
      return bad('Please use a valid role: user, model.');
    }
    const role = rawRole === 'model' ? 'model' : 'user';
    if (info.responses.length > 0) {
      if (prevCalls === 0) return bad('Please ensure that function response turn comes immediately after a function call turn.');
      if (info.responses.length !== prevCalls) {
        return bad('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
      }
    }
    if (info.calls > 0 && (i === 0 || prevRole !== 'user')) {
      return bad('Please ensure that function call turn comes immediately after a user turn or after a function response turn.');
    }
    a.allText.push(...info.texts);
    a.images += info.images;
    if (role === 'user') {
      if (info.responses.length > 0) a.toolResults = info.responses;
      else {
        a.toolResults = null;
        a.lastUserText = info.texts.join(' ');
      }
    } else a.toolResults = null;
    prevRole = role;
    prevCalls = role === 'model' ? info.calls : 0;
  }
  return a;
}

function toolNames(tools: unknown): string[] | Reply {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) return bad(`Invalid value at 'tools', expected a list.`);
  const names: string[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    if (!isObject(t)) return bad(`Invalid value at 'tools[${i}]', expected an object.`);
    const unknown = unknownFields(t, TOOL_FIELDS, `tools[${i}]`);
    if (unknown) return unknown;
    const decls = f(t, 'functionDeclarations');
    if (decls === undefined) continue;
    if (!Array.isArray(decls)) return bad(`Invalid value at 'tools[${i}].function_declarations', expected a list.`);
    for (let j = 0; j < decls.length; j++) {
      const d: unknown = decls[j];
      const at = `tools[${i}].function_declarations[${j}]`;
      if (!isObject(d)) return bad(`Invalid value at '${at}', expected an object.`);
      const unknownDecl = unknownFields(d, DECLARATION_FIELDS, at);
      if (unknownDecl) return unknownDecl;
      if (typeof d.name !== 'string' || !d.name) return bad(`* GenerateContentRequest.${at}.name: Name cannot be empty.\n`);
      if (!FUNCTION_NAME.test(d.name)) {
        return bad(
          `* GenerateContentRequest.${at}.name: Invalid function name. Must start with a letter or an underscore. Must be ` +
          'alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n',
        );
      }
      names.push(d.name);
    }
  }
  return names;
}

function chooseTool(names: string[], toolConfig: unknown): string | undefined {
  if (names.length === 0) return undefined;
  const fcc = isObject(toolConfig) ? f(toolConfig, 'functionCallingConfig') : undefined;
  if (!isObject(fcc)) return names[0];
  if (fcc.mode === 'NONE') return undefined;
  const allowed = f(fcc, 'allowedFunctionNames');
  if (Array.isArray(allowed)) {
    const hit = allowed.find((n) => typeof n === 'string' && names.includes(n));
    if (typeof hit === 'string') return hit;
  }
  return names[0];
}

// ---------------------------------------------------------------- generateContent

interface Plan {
  model: string;
  thought: string | undefined; // returned thought text (includeThoughts)
  thoughtsTokens: number;
  call: { name: string; args: JsonObject } | undefined;
  text: string;
  finishReason: string;
  promptTokens: number;
}

function plan(ctx: RequestContext, model: string): Plan | Reply {
  if (ctx.badJson) return bad('Invalid JSON payload received. Unexpected token.');
  const body = ctx.body;
  if (!isObject(body)) return bad('Invalid JSON payload received. Expected an object.');
  const unknown = unknownFields(body, REQUEST_FIELDS, '');
  if (unknown) return unknown;
  const gc = f(body, 'generationConfig');
  let maxTokens: number | undefined;
  let stops: string[] = [];
  let includeThoughts = false;
  let thinks = false;
  if (gc !== undefined && gc !== null) {
    if (!isObject(gc)) return bad(`Invalid value at 'generation_config', expected an object.`);
    const unknownGc = unknownFields(gc, GENERATION_CONFIG_FIELDS, 'generation_config');
    if (unknownGc) return unknownGc;
    const mt = f(gc, 'maxOutputTokens');
    if (mt !== undefined) {
      if (typeof mt !== 'number' || !Number.isInteger(mt)) return bad(`Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), ${JSON.stringify(mt)}`);
      maxTokens = mt;
    }
    stops = stopList(f(gc, 'stopSequences'));
    const tc = f(gc, 'thinkingConfig');
    if (tc !== undefined && tc !== null) {
      if (!isObject(tc)) return bad(`Invalid value at 'generation_config.thinking_config', expected an object.`);
      const unknownTc = unknownFields(tc, THINKING_FIELDS, 'generation_config.thinking_config');
      if (unknownTc) return unknownTc;
      includeThoughts = f(tc, 'includeThoughts') === true;
      const budget = f(tc, 'thinkingBudget');
      thinks = includeThoughts || (typeof budget === 'number' && budget !== 0) || f(tc, 'thinkingLevel') !== undefined;
    }
  }
  const a = analyze(body);
  if (isReply(a)) return a;
  const names = toolNames(f(body, 'tools'));
  if (isReply(names)) return names;
  const tool = chooseTool(names, f(body, 'toolConfig'));

  const toolTurn = a.toolResults !== null;
  const subject = toolTurn ? toolReplyText(a.toolResults ?? []) : a.lastUserText;
  const call = tool !== undefined && !toolTurn ? { name: tool, args: { query: a.lastUserText } } : undefined;
  const t = truncate(toolTurn ? subject : replyText(a.lastUserText, a.images), maxTokens, stops);
  const thoughtText = thinkingText(subject);
  return {
    model,
    thought: includeThoughts ? thoughtText : undefined,
    thoughtsTokens: thinks ? countWords(thoughtText) : 0,
    call,
    text: call ? '' : t.text,
    finishReason: !call && t.reason === 'length' ? 'MAX_TOKENS' : 'STOP',
    promptTokens: countWords(a.allText.join(' ')),
  };
}

function usage(p: Plan, candidates: number): JsonObject {
  const u: JsonObject = {
    promptTokenCount: p.promptTokens,
    candidatesTokenCount: candidates,
    totalTokenCount: p.promptTokens + candidates + p.thoughtsTokens,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: p.promptTokens }],
  };
  if (p.thoughtsTokens > 0) u.thoughtsTokenCount = p.thoughtsTokens;
  return u;
}

function response(p: Plan, responseId: string, partsOut: JsonObject[], finishReason: string | undefined, candidates: number): JsonObject {
  const candidate: JsonObject = { content: { parts: partsOut, role: 'model' } };
  if (finishReason) candidate.finishReason = finishReason;
  candidate.index = 0;
  return { candidates: [candidate], usageMetadata: usage(p, candidates), modelVersion: p.model, responseId };
}

function outputTokens(p: Plan): number {
  return countWords(p.call ? JSON.stringify(p.call.args) : p.text);
}

function generate(ctx: RequestContext, model: string): Reply {
  const p = plan(ctx, model);
  if (isReply(p)) return p;
  const partsOut: JsonObject[] = [];
  if (p.thought !== undefined) partsOut.push({ text: p.thought, thought: true });
  partsOut.push(p.call ? { functionCall: p.call } : { text: p.text });
  return json(200, response(p, ctx.nextId(), partsOut, p.finishReason, outputTokens(p)), { 'content-type': 'application/json; charset=UTF-8' });
}

/** Chunks of a streamed answer: thought first, then word by word (a function call comes whole). */
function streamChunks(p: Plan, responseId: string): JsonObject[] {
  const chunks: JsonObject[] = [];
  if (p.thought !== undefined) chunks.push(response(p, responseId, [{ text: p.thought, thought: true }], undefined, 0));
  if (p.call) {
    chunks.push(response(p, responseId, [{ functionCall: p.call }], p.finishReason, outputTokens(p)));
    return chunks;
  }
  const words = splitWords(p.text);
  if (words.length === 0) words.push('');
  let sofar = 0;
  words.forEach((w, i) => {
    sofar += countWords(w);
    const lastOne = i === words.length - 1;
    chunks.push(response(p, responseId, [{ text: w }], lastOne ? p.finishReason : undefined, sofar));
  });
  return chunks;
}

function streamGenerate(ctx: RequestContext, model: string): Reply {
  const p = plan(ctx, model);
  if (isReply(p)) return p;
  const chunks = streamChunks(p, ctx.nextId());
  if (ctx.query.alt === 'sse') return sse(chunks.map(geminiEvent), { ...SSE_HEADERS, 'content-type': 'text/event-stream' });
  // Without alt=sse the API streams one JSON array of responses.
  return json(200, chunks, { 'content-type': 'application/json; charset=UTF-8' });
}

function countTokens(ctx: RequestContext): Reply {
  if (ctx.badJson) return bad('Invalid JSON payload received. Unexpected token.');
  const body = ctx.body;
  if (!isObject(body)) return bad('Invalid JSON payload received. Expected an object.');
  const unknown = unknownFields(body, new Set(['contents', 'generateContentRequest']), '');
  if (unknown) return unknown;
  const inner = f(body, 'generateContentRequest');
  if (inner !== undefined) {
    if (!isObject(inner)) return bad(`Invalid value at 'generate_content_request', expected an object.`);
    const unknownInner = unknownFields(inner, REQUEST_FIELDS, 'generate_content_request');
    if (unknownInner) return unknownInner;
    // The embedded request names its model itself, as `models/{model}`.
    const m = f(inner, 'model');
    if (typeof m !== 'string' || !m.startsWith('models/')) {
      return bad('* GenerateContentRequest.model: unexpected model name format\n');
    }
  }
  const a = analyze(isObject(inner) ? inner : body);
  if (isReply(a)) return a;
  const n = countWords(a.allText.join(' '));
  return json(200, { totalTokens: n, promptTokensDetails: [{ modality: 'TEXT', tokenCount: n }] });
}

// ---------------------------------------------------------------- embeddings

function embedOne(req: unknown, at: string, reqName: string, urlModel: string): { text: string; dims: number } | Reply {
  if (!isObject(req)) return bad(`Invalid value at '${at || 'request'}', expected an object.`);
  const unknown = unknownFields(req, EMBED_FIELDS, at);
  if (unknown) return unknown;
  const m = req.model;
  if (m !== undefined) {
    if (typeof m !== 'string' || !m.startsWith('models/')) return bad(`* ${reqName}.model: unexpected model name format\n`);
    if (m !== `models/${urlModel}`) return bad(`* ${reqName}.model: model must match the model in the request URL (models/${urlModel})\n`);
  }
  const content = req.content;
  if (content === undefined) return bad(`* ${reqName}.content: content is not specified\n`);
  const info = parts(content, at ? `${at}.content` : 'content', `${reqName}.content`);
  if (isReply(info)) return info;
  const text = info.texts.join(' ');
  if (!text) return bad(`* ${reqName}.content.parts: Text content is empty.\n`);
  const dimsRaw = f(req, 'outputDimensionality');
  let dims = modelDimensions(urlModel);
  if (dimsRaw !== undefined) {
    if (typeof dimsRaw !== 'number' || !Number.isInteger(dimsRaw) || dimsRaw < 1) return bad(`* ${reqName}.output_dimensionality: must be positive.\n`);
    dims = dimsRaw;
  }
  return { text, dims };
}

function embedContent(ctx: RequestContext, model: string): Reply {
  if (ctx.badJson) return bad('Invalid JSON payload received. Unexpected token.');
  const one = embedOne(ctx.body, '', 'EmbedContentRequest', model);
  if (isReply(one)) return one;
  return json(200, { embedding: { values: Array.from(embed(one.text, one.dims)) } });
}

function batchEmbed(ctx: RequestContext, model: string): Reply {
  if (ctx.badJson) return bad('Invalid JSON payload received. Unexpected token.');
  const body = ctx.body;
  if (!isObject(body)) return bad('Invalid JSON payload received. Expected an object.');
  const unknown = unknownFields(body, new Set(['requests']), '');
  if (unknown) return unknown;
  const reqs = body.requests;
  if (!Array.isArray(reqs) || reqs.length === 0) return bad('* BatchEmbedContentsRequest.requests: requests is not specified\n');
  const embeddings: JsonObject[] = [];
  for (let i = 0; i < reqs.length; i++) {
    const one = embedOne(reqs[i], `requests[${i}]`, `BatchEmbedContentsRequest.requests[${i}]`, model);
    if (isReply(one)) return one;
    embeddings.push({ values: Array.from(embed(one.text, one.dims)) });
  }
  return json(200, { embeddings });
}

// ---------------------------------------------------------------- models

const MODEL_BODIES = new Map<string, string>(GEMINI_MODELS.map((m) => [m.name.slice('models/'.length), JSON.stringify(m)]));

function listModels(query: Record<string, string>): Reply {
  let size = 50;
  if (query.pageSize !== undefined) {
    size = Number(query.pageSize);
    if (!Number.isInteger(size) || size < 0) return bad(`Invalid value at 'page_size' (TYPE_INT32), "${query.pageSize}"`);
    if (size === 0) size = 50;
    size = Math.min(size, 1000);
  }
  let start = 0;
  if (query.pageToken) {
    const decoded = Buffer.from(query.pageToken, 'base64url').toString();
    const m = /^offset:(\d+)$/.exec(decoded);
    if (!m) return bad('Invalid page token.');
    start = Number(m[1]);
  }
  const models = GEMINI_MODELS.slice(start, start + size);
  const out: JsonObject = { models };
  if (start + size < GEMINI_MODELS.length) out.nextPageToken = Buffer.from(`offset:${start + size}`).toString('base64url');
  return json(200, out, { 'content-type': 'application/json; charset=UTF-8' });
}

function notFoundModel(model: string, method: string, version: string): Reply {
  return geminiError(404,
    `models/${model} is not found for API version ${version}, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`);
}

// ---------------------------------------------------------------- module

const MODELS_PATH = /^\/(v1beta|v1|v1alpha)\/models(?:\/(.+))?$/;
type Method = (ctx: RequestContext, model: string) => Reply;
const METHODS = new Map<string, Method>([
  ['generateContent', generate],
  ['streamGenerateContent', streamGenerate],
  ['embedContent', embedContent],
  ['batchEmbedContents', batchEmbed],
  ['countTokens', (ctx) => countTokens(ctx)],
]);

function header(ctx: RequestContext, name: string): string | undefined {
  const v = ctx.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : undefined;
}

export const gemini: FormatModule = {
  format: 'gemini',
  route(method, path): Route | undefined {
    const video = geminiVideoRoute(method, path, geminiError);
    if (video) return video;
    const m = MODELS_PATH.exec(path);
    if (!m) return undefined;
    const version = m[1];
    const rest = m[2] ? decodeURIComponent(m[2]) : undefined;
    if (method === 'GET') {
      if (rest === undefined) return { model: undefined, handle: (ctx) => listModels(ctx.query) };
      if (rest.includes(':')) return undefined;
      const body = MODEL_BODIES.get(rest);
      return { model: rest, handle: () => (body ? rawJson(200, body, { 'content-type': 'application/json; charset=UTF-8' }) : notFoundModel(rest, 'get', version)) };
    }
    if (method !== 'POST' || rest === undefined) return undefined;
    const colon = rest.lastIndexOf(':');
    if (colon <= 0) return undefined;
    const model = rest.slice(0, colon);
    const name = rest.slice(colon + 1);
    const handler = METHODS.get(name);
    if (!handler) return undefined;
    return {
      model,
      handle: (ctx) => (isNonexistentModel(model) ? notFoundModel(model, name, version) : handler(ctx, model)),
    };
  },
  authenticate(ctx) {
    const key = header(ctx, 'x-goog-api-key') ?? ctx.query.key;
    if (!key) {
      return geminiError(401,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    }
    if (key.startsWith('invalid')) return geminiError(401, 'API key not valid. Please pass a valid API key.', { code: 'API_KEY_INVALID' });
    return undefined;
  },
  error: geminiError,
  notFound(method, path) {
    return geminiError(404, `Method not found: ${method} ${path}`);
  },
};
