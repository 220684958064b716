// AWS Bedrock Runtime wire format: Converse and ConverseStream (real event-stream binary framing),
// under /bedrock/model/{modelId}/converse[-stream]. Requests must carry a well-formed SigV4
// `authorization` header for service `bedrock` (the signature itself is not recomputed), or a
// Bedrock API key as `Authorization: Bearer`.

import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { invokeEmbedding, isBedrockEmbeddingModel } from './bedrock-embed.ts';
import { json } from './reply.ts';
import { countWords, isObject, replyText, splitPieces, splitWords, toolReplyText, truncate } from './text.ts';
import type { ErrorExtra, FormatModule, JsonObject, Reply, RequestContext, Route } from './types.ts';

// ---------------------------------------------------------------- errors

function errorTypeFor(status: number): string {
  switch (status) {
    case 400: return 'ValidationException';
    case 401:
    case 403: return 'AccessDeniedException';
    case 404: return 'ResourceNotFoundException';
    case 408: return 'ModelTimeoutException';
    case 424: return 'ModelErrorException';
    case 429: return 'ThrottlingException';
    case 503: return 'ServiceUnavailableException';
    default: return status >= 500 ? 'InternalServerException' : 'ValidationException';
  }
}

const DEFAULT_MESSAGES: Record<string, string> = {
  ValidationException: 'The provided request is not valid.',
  AccessDeniedException: 'You don\'t have access to the model with the specified model ID.',
  ResourceNotFoundException: 'The provided model identifier is invalid.',
  ThrottlingException: 'Too many requests, please wait before trying again.',
  ServiceUnavailableException: 'Bedrock is unable to process your request.',
  InternalServerException: 'The server encountered an internal error.',
};

let requestCounter = 0;

export function bedrockError(status: number, message?: string, extra: ErrorExtra = {}): Reply {
  const type = extra.type ?? errorTypeFor(status);
  const requestId = `mock-req-${(++requestCounter).toString(36).padStart(8, '0')}`;
  return json(status, { message: message ?? DEFAULT_MESSAGES[type] ?? `Request failed with status ${status}.` }, {
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': requestId,
    ...extra.headers,
  });
}

const bad = (message: string): Reply => bedrockError(400, message);

// ---------------------------------------------------------------- auth

/** `AWS4-HMAC-SHA256 Credential=<key>/<yyyymmdd>/<region>/bedrock/aws4_request, SignedHeaders=..., Signature=<hex64>` */
const SIGV4 = /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([a-z0-9-]+)\/bedrock\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

function authenticate(ctx: RequestContext): Reply | undefined {
  const raw = ctx.headers.authorization;
  const auth = Array.isArray(raw) ? raw[0] : raw;
  if (!auth) return bedrockError(403, 'Missing Authentication Token', { type: 'AccessDeniedException' });
  if (auth.startsWith('Bearer ')) {
    const token = auth.slice(7).trim();
    if (!token || token.startsWith('invalid')) return bedrockError(403, 'The security token included in the request is invalid.', { type: 'UnrecognizedClientException' });
    return undefined;
  }
  const m = SIGV4.exec(auth);
  if (!m) return bedrockError(403, 'Authorization header requires a valid AWS4-HMAC-SHA256 signature for service bedrock.', { type: 'AccessDeniedException' });
  const [, accessKey, , , signedHeaders] = m;
  if (accessKey.startsWith('invalid')) return bedrockError(403, 'The security token included in the request is invalid.', { type: 'UnrecognizedClientException' });
  const signed = signedHeaders.split(';');
  if (!signed.includes('host') || !signed.includes('x-amz-date') || !ctx.headers['x-amz-date']) {
    return bedrockError(403, 'Signature must sign host and x-amz-date.', { type: 'AccessDeniedException' });
  }
  return undefined;
}

// ---------------------------------------------------------------- request analysis

const TOP_LEVEL = new Set([
  'messages', 'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields',
  'promptVariables', 'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig',
]);
const BLOCK_KEYS = ['text', 'image', 'document', 'video', 'toolUse', 'toolResult', 'guardContent', 'cachePoint', 'reasoningContent'];

interface Analysis {
  allText: string[];
  images: number;
  lastUserText: string;
  toolResults: string[] | null;
  lastRole: string;
}

function analyse(body: JsonObject): Analysis | Reply {
  for (const k of Object.keys(body)) if (!TOP_LEVEL.has(k)) return bad(`Malformed input request: extraneous key [${k}] is not permitted, please reformat your input and try again.`);
  const a: Analysis = { allText: [], images: 0, lastUserText: '', toolResults: null, lastRole: '' };
  if (body.system !== undefined) {
    if (!Array.isArray(body.system)) return bad('system: expected a list');
    for (const s of body.system) if (isObject(s) && typeof s.text === 'string') a.allText.push(s.text);
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return bad('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant')) return bad(`messages.${i}.role: must be user or assistant`);
    if (!Array.isArray(m.content) || m.content.length === 0) return bad(`messages.${i}.content: must be a non-empty list`);
    if (i === 0 && m.role !== 'user') return bad('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    const texts: string[] = [];
    const results: string[] = [];
    for (let k = 0; k < m.content.length; k++) {
      const b: unknown = m.content[k];
      if (!isObject(b)) return bad(`messages.${i}.content.${k}: expected an object`);
      const keys = Object.keys(b);
      if (keys.length !== 1 || !BLOCK_KEYS.includes(keys[0])) return bad(`messages.${i}.content.${k}: a content block must have exactly one of ${BLOCK_KEYS.join(', ')}`);
      if (typeof b.text === 'string') texts.push(b.text);
      else if (isObject(b.image)) {
        const src = b.image.source;
        if (!isObject(src) || typeof src.bytes !== 'string') return bad(`messages.${i}.content.${k}.image.source.bytes: required`);
        a.images++;
      } else if (isObject(b.toolUse)) {
        if (m.role !== 'assistant') return bad(`messages.${i}.content.${k}: toolUse is only allowed in assistant messages`);
        a.allText.push(JSON.stringify(b.toolUse.input ?? {}));
      } else if (isObject(b.toolResult)) {
        if (m.role !== 'user') return bad(`messages.${i}.content.${k}: toolResult is only allowed in user messages`);
        const parts: string[] = [];
        for (const c of Array.isArray(b.toolResult.content) ? b.toolResult.content : []) {
          if (isObject(c) && typeof c.text === 'string') parts.push(c.text);
          else if (isObject(c) && c.json !== undefined) parts.push(JSON.stringify(c.json));
        }
        results.push(parts.join(' '));
      }
    }
    a.allText.push(...texts, ...results);
    a.lastRole = m.role;
    if (m.role === 'user') {
      a.toolResults = results.length > 0 ? results : null;
      if (texts.length > 0 || results.length === 0) a.lastUserText = texts.join(' ');
    }
  }
  return a;
}

function isReply(v: unknown): v is Reply {
  return isObject(v) && (v.kind === 'json' || v.kind === 'sse');
}

// ---------------------------------------------------------------- converse

interface Turn {
  content: JsonObject[];
  stopReason: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  /** Streamed pieces: text deltas, or tool input pieces. */
  tool?: { toolUseId: string; name: string; input: string };
  text?: string;
}

function converse(ctx: RequestContext): Turn | Reply {
  if (ctx.badJson) return bad('Malformed input request, please reformat your input and try again.');
  if (!isObject(ctx.body)) return bad('Malformed input request, please reformat your input and try again.');
  const body = ctx.body;
  const a = analyse(body);
  if (isReply(a)) return a;
  const inputTokens = countWords(a.allText.join(' '));
  const tc = isObject(body.toolConfig) ? body.toolConfig : undefined;
  const tools = Array.isArray(tc?.tools) ? tc.tools.filter(isObject) : [];
  const names = tools.map((t) => (isObject(t.toolSpec) && typeof t.toolSpec.name === 'string' ? t.toolSpec.name : ''));
  if (names.some((n) => !/^[a-zA-Z0-9_-]{1,64}$/.test(n))) return bad('toolConfig.tools: every tool needs a toolSpec with a valid name');
  const choice = isObject(tc?.toolChoice) ? tc.toolChoice : undefined;
  let tool = names[0];
  if (choice && isObject(choice.tool)) {
    if (!names.includes(String(choice.tool.name))) return bad(`toolConfig.toolChoice.tool.name: tool ${String(choice.tool.name)} not found`);
    tool = String(choice.tool.name);
  }
  const toolTurn = a.toolResults !== null;
  if (tool && a.lastRole === 'user' && !toolTurn) {
    const input = { query: a.lastUserText };
    const inputJson = JSON.stringify(input);
    const toolUseId = `tooluse_${ctx.nextId()}`;
    const outputTokens = countWords(inputJson);
    return {
      content: [{ toolUse: { toolUseId, name: tool, input } }],
      stopReason: 'tool_use',
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      tool: { toolUseId, name: tool, input: inputJson },
    };
  }
  const inf = isObject(body.inferenceConfig) ? body.inferenceConfig : {};
  const maxTokens = typeof inf.maxTokens === 'number' ? inf.maxTokens : undefined;
  const stops = Array.isArray(inf.stopSequences) ? inf.stopSequences.filter((s): s is string => typeof s === 'string') : [];
  const full = toolTurn ? toolReplyText(a.toolResults ?? []) : replyText(a.lastUserText, a.images);
  const t = truncate(full, maxTokens, stops);
  const stopReason = t.reason === 'length' ? 'max_tokens' : t.reason === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
  const outputTokens = countWords(t.text);
  return {
    content: [{ text: t.text }],
    stopReason,
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
    text: t.text,
  };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream frame, as a latin1 string (one char per byte) for the server's writer. */
export function eventFrame(eventType: string, payload: unknown): string {
  const bytes = codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

function streamReply(turn: Turn): Reply {
  const frames = [eventFrame('messageStart', { role: 'assistant' })];
  if (turn.tool) {
    frames.push(eventFrame('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: turn.tool.toolUseId, name: turn.tool.name } } }));
    for (const piece of splitPieces(turn.tool.input)) frames.push(eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: piece } } }));
  } else {
    for (const piece of splitWords(turn.text ?? '')) frames.push(eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } }));
  }
  frames.push(eventFrame('contentBlockStop', { contentBlockIndex: 0 }));
  frames.push(eventFrame('messageStop', { stopReason: turn.stopReason }));
  frames.push(eventFrame('metadata', { usage: turn.usage, metrics: { latencyMs: 1 } }));
  return { kind: 'sse', events: frames, encoding: 'latin1', headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': `mock-req-${(++requestCounter).toString(36)}` } };
}

const CONVERSE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;
const INVOKE = /^\/model\/([^/]+)\/invoke$/;

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

export const bedrock: FormatModule = {
  format: 'bedrock',
  route(method: string, path: string): Route | undefined {
    // InvokeModel answers embedding models only (Titan, Cohere Embed).
    const inv = method === 'POST' ? INVOKE.exec(path) : null;
    if (inv) {
      const model = safeDecode(inv[1]);
      if (model === undefined || !isBedrockEmbeddingModel(model)) return undefined;
      return { model, handle: (ctx) => invokeEmbedding(model, ctx, (status, message) => bedrockError(status, message)) };
    }
    const m = CONVERSE.exec(path);
    if (!m || method !== 'POST') return undefined;
    let model: string;
    try {
      model = decodeURIComponent(m[1]);
    } catch {
      return undefined;
    }
    const stream = m[2] === 'converse-stream';
    return {
      model,
      handle: (ctx) => {
        if (model.startsWith('nonexistent')) return bedrockError(404, 'The provided model identifier is invalid.', { type: 'ResourceNotFoundException' });
        const turn = converse(ctx);
        if (isReply(turn)) return turn;
        if (stream) return streamReply(turn);
        return json(200, {
          output: { message: { role: 'assistant', content: turn.content } },
          stopReason: turn.stopReason,
          usage: turn.usage,
          metrics: { latencyMs: 1 },
        }, { 'x-amzn-requestid': `mock-req-${(++requestCounter).toString(36)}` });
      },
    };
  },
  authenticate,
  error: bedrockError,
  notFound: (method, path) => bedrockError(404, `no Bedrock endpoint ${method} ${path}`, { type: 'UnknownOperationException' }),
};
