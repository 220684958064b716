// Anthropic wire format: Messages (incl. streaming, tools, thinking), count_tokens, Models.

import { ANTHROPIC_MODELS, isNonexistentModel } from './models.ts';
import { json, rawJson, sse } from './reply.ts';
import { namedEvent, SSE_HEADERS } from './sse.ts';
import {
  countWords, isObject, replyText, splitPieces, splitWords, stopList, thinkingSignature, thinkingText,
  toolReplyText, truncate,
} from './text.ts';
import type { ErrorExtra, FormatModule, JsonObject, Reply, RequestContext, Route } from './types.ts';

// ---------------------------------------------------------------- errors

function errorTypeFor(status: number): string {
  switch (status) {
    case 400: return 'invalid_request_error';
    case 401: return 'authentication_error';
    case 402: return 'billing_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 409: return 'conflict_error';
    case 413: return 'request_too_large';
    case 429: return 'rate_limit_error';
    case 504: return 'timeout_error';
    case 529: return 'overloaded_error';
    default: return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Invalid request.',
  401: 'invalid x-api-key',
  402: 'Your credit balance is too low to access the Anthropic API.',
  403: 'Your API key does not have permission to use the specified resource.',
  404: 'The requested resource could not be found.',
  413: 'Request exceeds the maximum allowed number of bytes.',
  429: 'Number of requests has exceeded your rate limit. Please try again later.',
  500: 'Internal server error',
  504: 'Request timed out.',
  529: 'Overloaded',
};

let requestCounter = 0;

export function anthropicError(status: number, message?: string, extra: ErrorExtra = {}): Reply {
  const requestId = `req_mock${(++requestCounter).toString(36).padStart(8, '0')}`;
  return json(status, {
    type: 'error',
    error: { type: extra.type ?? errorTypeFor(status), message: message ?? DEFAULT_MESSAGES[status] ?? `Request failed with status ${status}.` },
    request_id: requestId,
  }, { 'request-id': requestId, ...extra.headers });
}

function bad(message: string): Reply {
  return anthropicError(400, message);
}

function isReply(v: unknown): v is Reply {
  return isObject(v) && (v.kind === 'json' || v.kind === 'sse');
}

// ---------------------------------------------------------------- request validation

const MESSAGE_PARAMS = new Set([
  'model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_k',
  'top_p', 'tools', 'tool_choice', 'thinking', 'service_tier', 'container', 'mcp_servers', 'context_management',
  'output_config', 'output_format', 'inference_geo', 'cache_control', 'speed', 'diagnostics', 'user_profile_id',
  'workspace_id',
]);
const COUNT_PARAMS = new Set([
  'model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers', 'context_management',
  'output_config', 'output_format', 'cache_control', 'speed',
]);

const BLOCK_TYPES = [
  'text', 'image', 'document', 'search_result', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result',
  'server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result',
  'bash_code_execution_tool_result', 'text_editor_code_execution_tool_result', 'mcp_tool_use', 'mcp_tool_result',
  'container_upload', 'tool_search_tool_result',
];
const USER_ONLY = new Set(['tool_result']);
const ASSISTANT_ONLY = new Set(['tool_use', 'thinking', 'redacted_thinking', 'server_tool_use']);
const MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

function tagError(path: string, tag: unknown, expected: string[]): Reply {
  return bad(`${path}: Input tag '${String(tag)}' found using 'type' does not match any of the expected tags: ${expected.map((e) => `'${e}'`).join(', ')}`);
}

interface Analysis {
  allText: string[];
  images: number;
  lastUserText: string;
  /** Tool results of the final user message, when it answers tool calls. */
  toolResults: string[] | null;
}

function imageBlock(b: JsonObject, p: string): Reply | undefined {
  const src = b.source;
  if (!isObject(src)) return bad(`${p}.source: Field required`);
  if (src.type === 'base64') {
    if (typeof src.media_type !== 'string' || !MEDIA_TYPES.includes(src.media_type)) {
      return bad(`${p}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`);
    }
    if (typeof src.data !== 'string' || src.data === '') return bad(`${p}.source.base64.data: Field required`);
  } else if (src.type === 'url') {
    if (typeof src.url !== 'string' || src.url === '') return bad(`${p}.source.url.url: Field required`);
  } else if (src.type === 'file') {
    if (typeof src.file_id !== 'string') return bad(`${p}.source.file.file_id: Field required`);
  } else {
    return tagError(`${p}.source`, src.type, ['base64', 'url', 'file']);
  }
  return undefined;
}

/** Text of a tool_result's content (string or blocks); counts nested images. */
function toolResultText(b: JsonObject, p: string, a: Analysis): string | Reply {
  const c = b.content;
  if (c === undefined || c === null) return '';
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return bad(`${p}.content: Input should be a valid string or list`);
  const parts: string[] = [];
  for (let k = 0; k < c.length; k++) {
    const inner: unknown = c[k];
    const ip = `${p}.content.${k}`;
    if (!isObject(inner)) return bad(`${ip}: Input should be a valid dictionary or object`);
    if (inner.type === 'text') {
      if (typeof inner.text !== 'string') return bad(`${ip}.text: Field required`);
      parts.push(inner.text);
    } else if (inner.type === 'image') {
      const err = imageBlock(inner, ip);
      if (err) return err;
      a.images++;
    } else if (inner.type !== 'document' && inner.type !== 'search_result') {
      return tagError(ip, inner.type, ['text', 'image', 'document', 'search_result']);
    }
  }
  return parts.join(' ');
}

function analyze(body: JsonObject, thinkingOn: boolean): Analysis | Reply {
  const a: Analysis = { allText: [], images: 0, lastUserText: '', toolResults: null };
  const system = body.system;
  if (system !== undefined && system !== null) {
    if (typeof system === 'string') a.allText.push(system);
    else if (Array.isArray(system)) {
      for (let i = 0; i < system.length; i++) {
        const b: unknown = system[i];
        if (!isObject(b) || b.type !== 'text') return tagError(`system.${i}`, isObject(b) ? b.type : b, ['text']);
        if (typeof b.text !== 'string') return bad(`system.${i}.text: Field required`);
        a.allText.push(b.text);
      }
    } else return bad('system: Input should be a valid string or list');
  }

  const messages = body.messages;
  if (messages === undefined) return bad('messages: Field required');
  if (!Array.isArray(messages)) return bad('messages: Input should be a valid list');
  if (messages.length === 0) return bad('messages: at least one message is required');

  let pendingToolUse: string[] = []; // tool_use ids of the previous assistant message
  let pendingFrom = -1;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    const p = `messages.${i}`;
    if (!isObject(m)) return bad(`${p}: Input should be a valid dictionary or object`);
    if (m.role === 'system') {
      return bad('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.');
    }
    if (m.role !== 'user' && m.role !== 'assistant') return bad(`${p}.role: Input should be 'user' or 'assistant'`);
    const role = m.role;
    const isLast = i === messages.length - 1;
    let content = m.content;
    if (content === undefined) return bad(`${p}.content: Field required`);
    if (typeof content === 'string') content = [{ type: 'text', text: content }];
    if (!Array.isArray(content)) return bad(`${p}.content: Input should be a valid list`);
    const emptyString = typeof m.content === 'string' && m.content === '';
    if ((content.length === 0 || emptyString) && !(isLast && role === 'assistant')) {
      return bad(`${p}: all messages must have non-empty content except for the optional final assistant message`);
    }

    const userTexts: string[] = [];
    const results: string[] = [];
    const answered = new Set<string>();
    const toolUses: string[] = [];
    for (let j = 0; j < content.length; j++) {
      const b: unknown = content[j];
      const bp = `${p}.content.${j}`;
      if (!isObject(b)) return bad(`${bp}: Input should be a valid dictionary or object`);
      if (typeof b.type !== 'string' || !BLOCK_TYPES.includes(b.type)) return tagError(bp, b.type, BLOCK_TYPES);
      if (role === 'assistant' && USER_ONLY.has(b.type)) return bad(`${bp}.type: \`${b.type}\` blocks can only be in \`user\` messages`);
      if (role === 'user' && ASSISTANT_ONLY.has(b.type)) return bad(`${bp}.type: \`${b.type}\` blocks can only be in \`assistant\` messages`);
      switch (b.type) {
        case 'text':
          if (typeof b.text !== 'string') return bad(`${bp}.text: Field required`);
          if (b.text === '' && !(isLast && role === 'assistant')) return bad('messages: text content blocks must be non-empty');
          a.allText.push(b.text);
          if (role === 'user') userTexts.push(b.text);
          break;
        case 'image': {
          const err = imageBlock(b, bp);
          if (err) return err;
          a.images++;
          break;
        }
        case 'tool_use':
          if (typeof b.id !== 'string') return bad(`${bp}.id: Field required`);
          if (!TOOL_ID.test(b.id)) return bad(`${bp}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
          if (typeof b.name !== 'string') return bad(`${bp}.name: Field required`);
          if (!isObject(b.input)) return bad(`${bp}.input: Input should be a valid dictionary`);
          toolUses.push(b.id);
          a.allText.push(JSON.stringify(b.input));
          break;
        case 'tool_result': {
          if (typeof b.tool_use_id !== 'string') return bad(`${bp}.tool_use_id: Field required`);
          if (!pendingToolUse.includes(b.tool_use_id)) {
            return bad(
              `${bp}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
            );
          }
          answered.add(b.tool_use_id);
          const text = toolResultText(b, bp, a);
          if (typeof text !== 'string') return text;
          a.allText.push(text);
          results.push(text);
          break;
        }
        case 'thinking':
          if (typeof b.thinking !== 'string') return bad(`${bp}.thinking.thinking: Field required`);
          if (typeof b.signature !== 'string') return bad(`${bp}.thinking.signature: Field required`);
          if (b.signature !== thinkingSignature(b.thinking)) return bad(`${bp}: Invalid \`signature\` in \`thinking\` block`);
          break;
        case 'redacted_thinking':
          if (typeof b.data !== 'string') return bad(`${bp}.redacted_thinking.data: Field required`);
          break;
        default:
          break;
      }
    }

    if (pendingToolUse.length > 0) {
      const missingIds = pendingToolUse.filter((id) => !answered.has(id));
      if (role !== 'user' || missingIds.length > 0) {
        return bad(
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${(role === 'user' ? missingIds : pendingToolUse).join(', ')}. ` +
          'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        );
      }
    }
    if (role === 'assistant') {
      pendingToolUse = toolUses;
      pendingFrom = i;
    } else {
      pendingToolUse = [];
    }
    if (role === 'user') {
      if (userTexts.length > 0 || results.length === 0) a.lastUserText = userTexts.join(' ');
      a.toolResults = results.length > 0 ? results : null;
    } else {
      a.toolResults = null;
    }

    // With thinking on, the assistant turn answered by the final tool_result must start with a thinking block.
    if (thinkingOn && isLast && role === 'user' && results.length > 0 && i > 0) {
      const prev = messages[i - 1];
      const prevContent = isObject(prev) ? prev.content : undefined;
      const first: unknown = Array.isArray(prevContent) ? prevContent[0] : { type: 'text' };
      const firstType = isObject(first) ? first.type : undefined;
      if (firstType !== 'thinking' && firstType !== 'redacted_thinking') {
        return bad(
          `messages.${i - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(firstType)}\`. ` +
          'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of ' +
          '`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this ' +
          'requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking',
        );
      }
    }
  }
  if (pendingToolUse.length > 0) {
    return bad(
      `messages.${pendingFrom}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${pendingToolUse.join(', ')}. ` +
      'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
  }
  return a;
}

function toolNames(tools: unknown): string[] | Reply {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) return bad('tools: Input should be a valid list');
  const names: string[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    const p = `tools.${i}`;
    if (!isObject(t)) return bad(`${p}: Input should be a valid dictionary or object`);
    const type = t.type;
    const custom = type === undefined || type === null || type === 'custom';
    if (!custom && !(typeof type === 'string' && /_\d{8}$/.test(type))) {
      return tagError(p, type, ['custom', 'bash_20250124', 'text_editor_20250728', 'web_search_20250305', 'web_fetch_20250910', 'code_execution_20250825']);
    }
    if (typeof t.name !== 'string') return bad(`${p}.${custom ? 'custom.' : ''}name: Field required`);
    if (custom) {
      if (!TOOL_NAME.test(t.name)) return bad(`${p}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
      if (!isObject(t.input_schema)) return bad(`${p}.custom.input_schema: Field required`);
    }
    names.push(t.name);
  }
  return names;
}

function chooseTool(names: string[], choice: unknown): string | undefined | Reply {
  if (choice === undefined || choice === null) return names[0];
  if (!isObject(choice)) return bad('tool_choice: Input should be a valid dictionary or object');
  switch (choice.type) {
    case 'auto':
    case 'any':
      return names[0];
    case 'none':
      return undefined;
    case 'tool':
      if (typeof choice.name !== 'string') return bad('tool_choice.tool.name: Field required');
      if (!names.includes(choice.name)) return bad(`tool_choice.tool.name: Tool '${choice.name}' not found in tools`);
      return choice.name;
    default:
      return tagError('tool_choice', choice.type, ['auto', 'any', 'tool', 'none']);
  }
}

interface Thinking {
  on: boolean;
  omitted: boolean;
}

function thinkingConfig(body: JsonObject, maxTokens: number | undefined): Thinking | Reply {
  const t = body.thinking;
  if (t === undefined || t === null) return { on: false, omitted: false };
  if (!isObject(t)) return bad('thinking: Input should be a valid dictionary or object');
  if (t.type === 'disabled') return { on: false, omitted: false };
  if (t.type === 'enabled') {
    const budget = t.budget_tokens;
    if (budget === undefined) return bad('thinking.enabled.budget_tokens: Field required');
    if (typeof budget !== 'number' || !Number.isInteger(budget)) return bad('thinking.enabled.budget_tokens: Input should be a valid integer');
    if (budget < 1024) return bad('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (maxTokens !== undefined && maxTokens <= budget) {
      return bad('`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size');
    }
  } else if (t.type !== 'adaptive') {
    return tagError('thinking', t.type, ['enabled', 'disabled', 'adaptive']);
  }
  if (body.temperature !== undefined && body.temperature !== 1) {
    return bad('`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility');
  }
  return { on: true, omitted: t.display === 'omitted' };
}

interface Checked {
  body: JsonObject;
  model: string;
  maxTokens: number | undefined;
  analysis: Analysis;
  thinking: Thinking;
  tool: string | undefined;
}

function check(ctx: RequestContext, allowed: Set<string>, needMaxTokens: boolean): Checked | Reply {
  if (ctx.badJson) return bad('There was an issue with the request body: the body is not valid JSON.');
  const body = ctx.body;
  if (!isObject(body)) return bad('Input should be a valid dictionary or object');
  for (const k of Object.keys(body)) if (!allowed.has(k)) return bad(`${k}: Extra inputs are not permitted`);
  const model = body.model;
  if (model === undefined) return bad('model: Field required');
  if (typeof model !== 'string') return bad('model: Input should be a valid string');
  if (isNonexistentModel(model)) return anthropicError(404, `model: ${model}`);
  let maxTokens: number | undefined;
  if (needMaxTokens) {
    const mt = body.max_tokens;
    if (mt === undefined) return bad('max_tokens: Field required');
    if (typeof mt !== 'number' || !Number.isInteger(mt)) return bad('max_tokens: Input should be a valid integer');
    if (mt < 1) return bad('max_tokens: Input should be greater than or equal to 1');
    maxTokens = mt;
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return bad('stream: Input should be a valid boolean');
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.every((s) => typeof s === 'string'))) {
    return bad('stop_sequences: Input should be a valid list of strings');
  }
  const thinking = thinkingConfig(body, maxTokens);
  if (isReply(thinking)) return thinking;
  const analysis = analyze(body, thinking.on);
  if (isReply(analysis)) return analysis;
  const names = toolNames(body.tools);
  if (isReply(names)) return names;
  const tool = chooseTool(names, body.tool_choice);
  if (isReply(tool)) return tool;
  return { body, model, maxTokens, analysis, thinking, tool };
}

// ---------------------------------------------------------------- messages

function messages(ctx: RequestContext): Reply {
  const c = check(ctx, MESSAGE_PARAMS, true);
  if (isReply(c)) return c;
  const { body, model, maxTokens, analysis: a, thinking, tool } = c;

  const toolTurn = a.toolResults !== null;
  const subject = toolTurn ? toolReplyText(a.toolResults ?? []) : a.lastUserText;
  const callTool = tool !== undefined && !toolTurn;
  const thought = thinking.on ? (thinking.omitted ? '' : thinkingText(subject)) : undefined;
  const signature = thought !== undefined ? thinkingSignature(thought) : '';
  const t = truncate(toolTurn ? subject : replyText(a.lastUserText, a.images), maxTokens, stopList(body.stop_sequences));
  const input = { query: a.lastUserText };
  const args = JSON.stringify(input);
  const toolId = `toolu_${ctx.nextId()}`;

  const inputTokens = countWords(a.allText.join(' '));
  const thinkingTokens = thinking.on ? countWords(thinkingText(subject)) : 0;
  const outputTokens = thinkingTokens + countWords(callTool ? args : t.text);
  const stopReason = callTool ? 'tool_use' : t.reason === 'length' ? 'max_tokens' : t.reason === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
  const stopSequence = !callTool && t.reason === 'stop_sequence' ? t.stopSequence ?? null : null;
  const id = `msg_${ctx.nextId()}`;

  const content: JsonObject[] = [];
  if (thought !== undefined) content.push({ type: 'thinking', thinking: thought, signature });
  if (callTool) content.push({ type: 'tool_use', id: toolId, name: tool, input });
  else content.push({ type: 'text', text: t.text });

  if (body.stream !== true) {
    return json(200, {
      id, type: 'message', role: 'assistant', model, content,
      stop_reason: stopReason, stop_sequence: stopSequence,
      usage: {
        input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
        output_tokens: outputTokens, service_tier: 'standard',
      },
    });
  }

  const events: string[] = [];
  const ev = (name: string, payload: JsonObject): void => {
    events.push(namedEvent(name, { type: name, ...payload }));
  };
  ev('message_start', {
    message: {
      id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: 'standard' },
    },
  });
  let index = 0;
  const block = (start: JsonObject, deltas: JsonObject[]): void => {
    ev('content_block_start', { index, content_block: start });
    if (index === 0) ev('ping', {});
    for (const delta of deltas) ev('content_block_delta', { index, delta });
    ev('content_block_stop', { index });
    index++;
  };
  if (thought !== undefined) {
    const deltas: JsonObject[] = splitWords(thought).map((w) => ({ type: 'thinking_delta', thinking: w }));
    deltas.push({ type: 'signature_delta', signature });
    block({ type: 'thinking', thinking: '', signature: '' }, deltas);
  }
  if (callTool) {
    const deltas: JsonObject[] = [{ type: 'input_json_delta', partial_json: '' }];
    for (const piece of splitPieces(args)) deltas.push({ type: 'input_json_delta', partial_json: piece });
    block({ type: 'tool_use', id: toolId, name: tool, input: {} }, deltas);
  } else {
    block({ type: 'text', text: '' }, splitWords(t.text).map((w) => ({ type: 'text_delta', text: w })));
  }
  ev('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: stopSequence },
    usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens },
  });
  ev('message_stop', {});
  return sse(events, { ...SSE_HEADERS, 'request-id': `req_${ctx.nextId()}` });
}

function countTokens(ctx: RequestContext): Reply {
  const c = check(ctx, COUNT_PARAMS, false);
  if (isReply(c)) return c;
  return json(200, { input_tokens: countWords(c.analysis.allText.join(' ')) });
}

// ---------------------------------------------------------------- models

const MODEL_BODIES = new Map<string, string>(ANTHROPIC_MODELS.map((m) => [m.id, JSON.stringify(m)]));

function listModels(query: Record<string, string>): Reply {
  let limit = 20;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!Number.isInteger(limit)) return bad('limit: Input should be a valid integer, unable to parse string as an integer');
    if (limit < 1) return bad('limit: Input should be greater than or equal to 1');
    if (limit > 1000) return bad('limit: Input should be less than or equal to 1000');
  }
  const all = ANTHROPIC_MODELS;
  let data;
  let hasMore: boolean;
  if (query.before_id !== undefined) {
    const end = all.findIndex((m) => m.id === query.before_id);
    if (end < 0) return bad(`before_id: Invalid cursor: ${query.before_id}`);
    const start = Math.max(0, end - limit);
    data = all.slice(start, end);
    hasMore = start > 0;
  } else {
    let start = 0;
    if (query.after_id !== undefined) {
      const i = all.findIndex((m) => m.id === query.after_id);
      if (i < 0) return bad(`after_id: Invalid cursor: ${query.after_id}`);
      start = i + 1;
    }
    data = all.slice(start, start + limit);
    hasMore = start + limit < all.length;
  }
  return json(200, {
    data,
    has_more: hasMore,
    first_id: data.length ? data[0].id : null,
    last_id: data.length ? data[data.length - 1].id : null,
  });
}

function retrieveModel(id: string): Reply {
  const body = MODEL_BODIES.get(id);
  return body ? rawJson(200, body) : anthropicError(404, `model: ${id}`);
}

// ---------------------------------------------------------------- module

function bodyModel(body: unknown): string | undefined {
  return isObject(body) && typeof body.model === 'string' ? body.model : undefined;
}

function header(ctx: RequestContext, name: string): string | undefined {
  const v = ctx.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : undefined;
}

export const anthropic: FormatModule = {
  format: 'anthropic',
  route(method, path, body): Route | undefined {
    if (method === 'POST') {
      if (path === '/v1/messages') return { model: bodyModel(body), handle: messages };
      if (path === '/v1/messages/count_tokens') return { model: bodyModel(body), handle: countTokens };
      return undefined;
    }
    if (method === 'GET') {
      if (path === '/v1/models') return { model: undefined, handle: (ctx) => listModels(ctx.query) };
      if (path.startsWith('/v1/models/')) {
        const id = decodeURIComponent(path.slice('/v1/models/'.length));
        return { model: id, handle: () => retrieveModel(id) };
      }
    }
    return undefined;
  },
  authenticate(ctx) {
    // x-api-key, or `Authorization: Bearer <key>` (what current official SDKs send for API keys).
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(ctx, 'authorization') ?? '');
    const key = header(ctx, 'x-api-key') || bearer?.[1];
    if (!key) return anthropicError(401, 'x-api-key header is required');
    if (key.startsWith('invalid')) return anthropicError(401, 'invalid x-api-key');
    if (!header(ctx, 'anthropic-version')) return anthropicError(400, 'anthropic-version: header is required');
    return undefined;
  },
  error: anthropicError,
  notFound() {
    return anthropicError(404, 'Not Found');
  },
};
