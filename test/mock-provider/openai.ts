// OpenAI wire format: Chat Completions, Completions, Embeddings, Responses (and its input token count), Models;
// Files and Batches live in openai-files.ts, Containers in openai-containers.ts, Images and Audio in openai-media.ts,
// Moderations in openai-moderation.ts, Decisions in openai-decisions.ts, Videos in videos.ts.

import { isNonexistentModel, OPENAI_MODELS, OPENAI_MODELS_BODY } from './models.ts';
import { modelDimensions } from './embeddings.ts';
import { json, rawJson, sse } from './reply.ts';
import { dataEvent, DONE_EVENT, namedEvent, SSE_HEADERS } from './sse.ts';
import {
  countWords, embed, embedBase64, isObject, nowSeconds, replyText, splitPieces, splitWords, stopList,
  thinkingText, toolReplyText, truncate,
} from './text.ts';
import type { ErrorExtra, FormatModule, JsonObject, Reply, RequestContext, Route } from './types.ts';
import { openaiFilesRoute } from './openai-files.ts';
import { openaiContainersRoute } from './openai-containers.ts';
import { openaiMediaHandler } from './openai-media.ts';
import { moderations } from './openai-moderation.ts';
import { openaiVideoRoute } from './videos.ts';
import { decisions } from './openai-decisions.ts';

// ---------------------------------------------------------------- errors

function errorTypeFor(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 403) return { type: 'permission_error', code: null };
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Bad request.',
  401: 'Incorrect API key provided.',
  403: 'You are not allowed to sample from this model.',
  404: 'The requested resource does not exist.',
  409: 'Conflict.',
  422: 'Unprocessable entity.',
  429: 'Rate limit reached for requests. Please try again later.',
  500: 'The server had an error while processing your request. Sorry about that!',
  502: 'Bad gateway.',
  503: 'The server is overloaded or not ready yet.',
  504: 'Gateway timeout.',
};

export function openaiError(status: number, message?: string, extra: ErrorExtra = {}): Reply {
  const def = errorTypeFor(status);
  return json(status, {
    error: {
      message: message ?? DEFAULT_MESSAGES[status] ?? `Request failed with status ${status}.`,
      type: extra.type ?? def.type,
      param: extra.param ?? null,
      code: extra.code === undefined ? def.code : extra.code,
    },
  }, extra.headers);
}

export function bad(message: string, param: string | null = null, code: string | null = null): Reply {
  return openaiError(400, message, { param, code });
}

export function missing(param: string): Reply {
  return bad(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

export function invalidType(param: string, expected: string, v: unknown): Reply {
  return bad(`Invalid type for '${param}': expected ${expected}, but got ${typeName(v)} instead.`, param, 'invalid_type');
}

export function invalidValue(param: string, v: unknown, allowed: string[]): Reply {
  const list = allowed.map((a) => `'${a}'`);
  const tail = list.length > 1 ? `${list.slice(0, -1).join(', ')}, and ${list[list.length - 1]}` : list[0];
  return bad(`Invalid value: '${String(v)}'. Supported values are: ${tail}.`, param, 'invalid_value');
}

export const PARSE_ERROR =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library " +
  'correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble ' +
  'figuring out how to fix this, please contact us through our help center at help.openai.com.)';

// ---------------------------------------------------------------- shared request checks

const CHAT_PARAMS = new Set([
  'messages', 'model', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs',
  'max_completion_tokens', 'max_tokens', 'metadata', 'modalities', 'moderation', 'n', 'parallel_tool_calls',
  'prediction', 'presence_penalty', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention',
  'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream',
  'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity',
  'web_search_options',
]);
const COMPLETION_PARAMS = new Set([
  'model', 'prompt', 'best_of', 'echo', 'frequency_penalty', 'logit_bias', 'logprobs', 'max_tokens', 'n',
  'presence_penalty', 'seed', 'stop', 'stream', 'stream_options', 'suffix', 'temperature', 'top_p', 'user',
]);
const EMBEDDING_PARAMS = new Set(['input', 'model', 'dimensions', 'encoding_format', 'user']);
const RESPONSES_PARAMS = new Set([
  'background', 'context_management', 'conversation', 'include', 'input', 'instructions', 'max_output_tokens',
  'max_tool_calls', 'metadata', 'model', 'parallel_tool_calls', 'previous_response_id', 'prompt',
  'prompt_cache_key', 'prompt_cache_retention', 'reasoning', 'safety_identifier', 'service_tier', 'store', 'stream',
  'stream_options', 'temperature', 'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'user',
]);

interface Checked {
  body: JsonObject;
  model: string;
}

function preflight(ctx: RequestContext, allowed: Set<string>, unknownStyle: 'chat' | 'responses'): Checked | Reply {
  if (ctx.badJson) return bad(PARSE_ERROR);
  const body = ctx.body;
  if (!isObject(body)) return bad(`Invalid type for request body: expected an object, but got ${typeName(body)} instead.`);
  for (const k of Object.keys(body)) {
    if (!allowed.has(k)) {
      return unknownStyle === 'chat'
        ? bad(`Unrecognized request argument supplied: ${k}`)
        : bad(`Unknown parameter: '${k}'.`, k, 'unknown_parameter');
    }
  }
  const model = body.model;
  if (model === undefined || model === null || model === '') return bad('you must provide a model parameter');
  if (typeof model !== 'string') return invalidType('model', 'a string', model);
  if (isNonexistentModel(model)) {
    return openaiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, { code: 'model_not_found' });
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    return invalidType('stream', 'a boolean', body.stream);
  }
  return { body, model };
}

function maxTokensOf(body: JsonObject, ...keys: string[]): number | undefined | Reply {
  for (const k of keys) {
    const v = body[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v)) return invalidType(k, 'an integer', v);
    if (v < 1) return bad(`Invalid '${k}': integer below minimum value. Expected a value >= 1, but got ${v} instead.`, k, 'integer_below_min_value');
    return v;
  }
  return undefined;
}

function includeUsage(body: JsonObject): boolean {
  return isObject(body.stream_options) && body.stream_options.include_usage === true;
}

function isReply(v: unknown): v is Reply {
  return isObject(v) && (v.kind === 'json' || v.kind === 'sse');
}

// ---------------------------------------------------------------- chat completions

const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];
const USER_PARTS = ['text', 'image_url', 'input_audio', 'file'];
const ASSISTANT_PARTS = ['text', 'refusal'];
const TEXT_PARTS = ['text'];

interface ChatAnalysis {
  allText: string[];
  images: number;
  lastRole: string;
  lastUserText: string;
  toolResults: string[];
}

/** Validates content and returns its text; `kinds` lists allowed part types. */
function chatContent(
  content: unknown, param: string, kinds: string[], out: { text: string[]; images: number },
): Reply | undefined {
  if (typeof content === 'string') {
    out.text.push(content);
    return undefined;
  }
  if (!Array.isArray(content)) return invalidType(param, 'one of a string or array of objects', content);
  for (let j = 0; j < content.length; j++) {
    const part: unknown = content[j];
    const p = `${param}[${j}]`;
    if (!isObject(part)) return invalidType(p, 'an object', part);
    if (part.type === undefined) return missing(`${p}.type`);
    if (typeof part.type !== 'string' || !kinds.includes(part.type)) return invalidValue(`${p}.type`, part.type, kinds);
    if (part.type === 'text') {
      if (typeof part.text !== 'string') return part.text === undefined ? missing(`${p}.text`) : invalidType(`${p}.text`, 'a string', part.text);
      out.text.push(part.text);
    } else if (part.type === 'refusal') {
      if (typeof part.refusal !== 'string') return missing(`${p}.refusal`);
    } else if (part.type === 'image_url') {
      const iu = part.image_url;
      if (!isObject(iu)) return iu === undefined ? missing(`${p}.image_url`) : invalidType(`${p}.image_url`, 'an object', iu);
      if (typeof iu.url !== 'string' || iu.url === '') return missing(`${p}.image_url.url`);
      out.images++;
    } else if (part.type === 'input_audio') {
      if (!isObject(part.input_audio)) return missing(`${p}.input_audio`);
    } else if (part.type === 'file') {
      if (!isObject(part.file)) return missing(`${p}.file`);
    }
  }
  return undefined;
}

function analyzeChat(messages: unknown[]): ChatAnalysis | Reply {
  const res: ChatAnalysis = { allText: [], images: 0, lastRole: '', lastUserText: '', toolResults: [] };
  let pending: Set<string> | null = null; // tool_call ids awaiting an answer
  let pendingFrom = -1;
  let trailingTools: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const p = `messages[${i}]`;
    if (!isObject(m)) return invalidType(p, 'an object', m);
    const role = m.role;
    if (role === undefined) return missing(`${p}.role`);
    if (typeof role !== 'string' || !ROLES.includes(role)) return invalidValue(`${p}.role`, role, ROLES);
    if (role !== 'tool' && pending && pending.size > 0) {
      return bad(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
        `The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
        `messages.[${pendingFrom}].role`,
      );
    }
    if (role !== 'tool') {
      pending = null;
      trailingTools = [];
    }
    const collected = { text: [] as string[], images: 0 };
    let err: Reply | undefined;
    if (role === 'assistant') {
      const calls = m.tool_calls;
      const hasCalls = Array.isArray(calls) && calls.length > 0;
      if (m.content === undefined || m.content === null) {
        if (!hasCalls && m.function_call === undefined) return missing(`${p}.content`);
      } else {
        err = chatContent(m.content, `${p}.content`, ASSISTANT_PARTS, collected);
      }
      if (calls !== undefined && calls !== null) {
        if (!Array.isArray(calls)) return invalidType(`${p}.tool_calls`, 'an array', calls);
        pending = new Set();
        pendingFrom = i;
        for (let j = 0; j < calls.length; j++) {
          const c: unknown = calls[j];
          const cp = `${p}.tool_calls[${j}]`;
          if (!isObject(c)) return invalidType(cp, 'an object', c);
          if (typeof c.id !== 'string') return missing(`${cp}.id`);
          if (c.type !== 'function' && c.type !== 'custom') return c.type === undefined ? missing(`${cp}.type`) : invalidValue(`${cp}.type`, c.type, ['function', 'custom']);
          if (c.type === 'function') {
            if (!isObject(c.function)) return missing(`${cp}.function`);
            if (typeof c.function.name !== 'string') return missing(`${cp}.function.name`);
            if (typeof c.function.arguments !== 'string') return missing(`${cp}.function.arguments`);
            collected.text.push(c.function.arguments);
          }
          pending.add(c.id);
        }
      }
    } else if (role === 'tool') {
      if (pending === null) {
        return bad(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      }
      if (typeof m.tool_call_id !== 'string') return missing(`${p}.tool_call_id`);
      if (!pending.has(m.tool_call_id)) {
        return bad(`Invalid parameter: 'tool_call_id' of '${m.tool_call_id}' not found in 'tool_calls' of previous message.`, `messages.[${i}].tool_call_id`);
      }
      pending.delete(m.tool_call_id);
      if (m.content === undefined || m.content === null) return missing(`${p}.content`);
      err = chatContent(m.content, `${p}.content`, TEXT_PARTS, collected);
      trailingTools.push(collected.text.join(' '));
    } else if (role === 'function') {
      if (typeof m.name !== 'string') return missing(`${p}.name`);
      if (m.content === undefined) return missing(`${p}.content`);
      if (m.content !== null) err = chatContent(m.content, `${p}.content`, TEXT_PARTS, collected);
      trailingTools = [collected.text.join(' ')];
    } else {
      if (m.content === undefined || m.content === null) return missing(`${p}.content`);
      err = chatContent(m.content, `${p}.content`, role === 'user' ? USER_PARTS : TEXT_PARTS, collected);
      if (role === 'user') res.lastUserText = collected.text.join(' ');
    }
    if (err) return err;
    res.allText.push(...collected.text);
    res.images += collected.images;
    res.lastRole = role;
  }
  if (pending && pending.size > 0) {
    return bad(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
      `messages.[${pendingFrom}].role`,
    );
  }
  res.toolResults = trailingTools;
  return res;
}

function chatToolNames(tools: unknown): string[] | Reply {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) return invalidType('tools', 'an array', tools);
  const names: string[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    const p = `tools[${i}]`;
    if (!isObject(t)) return invalidType(p, 'an object', t);
    if (t.type === undefined) return missing(`${p}.type`);
    if (t.type === 'function') {
      if (!isObject(t.function)) return missing(`${p}.function`);
      if (typeof t.function.name !== 'string' || !t.function.name) return missing(`${p}.function.name`);
      names.push(t.function.name);
    } else if (t.type === 'custom') {
      if (!isObject(t.custom) || typeof t.custom.name !== 'string') return missing(`${p}.custom.name`);
      names.push(t.custom.name);
    } else {
      return invalidValue(`${p}.type`, t.type, ['function', 'custom']);
    }
  }
  return names;
}

/** Tool to call, honoring tool_choice ('none' | 'auto' | 'required' | {type:'function', function:{name}}). */
function chosenTool(names: string[], choice: unknown): string | undefined | Reply {
  if (names.length === 0) return undefined;
  if (choice === 'none') return undefined;
  if (choice === undefined || choice === null || choice === 'auto' || choice === 'required') return names[0];
  if (isObject(choice)) {
    const fn = isObject(choice.function) ? choice.function.name : choice.name;
    if (typeof fn === 'string') {
      if (!names.includes(fn)) return bad(`Invalid value for 'tool_choice': tool '${fn}' is not defined in 'tools'.`, 'tool_choice');
      return fn;
    }
    if (choice.type === 'allowed_tools') return names[0];
  }
  return invalidValue('tool_choice', JSON.stringify(choice), ['none', 'auto', 'required']);
}

function chatUsage(prompt: number, completion: number, reasoning: number): JsonObject {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion + reasoning,
    total_tokens: prompt + completion + reasoning,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0,
    },
  };
}

/** `CALL <tool> <json>`: a tool call the test scripts (the tool must be one of `tools`). */
function scriptedCall(text: string, names: string[]): { name: string; args: string } | undefined {
  const m = /^CALL (\S+) ([\s\S]+)$/.exec(text.trim());
  if (!m || !names.includes(m[1])) return undefined;
  return { name: m[1], args: m[2] };
}

function chat(ctx: RequestContext): Reply {
  const pre = preflight(ctx, CHAT_PARAMS, 'chat');
  if (isReply(pre)) return pre;
  const { body, model } = pre;
  const messages = body.messages;
  if (messages === undefined || messages === null) return missing('messages');
  if (!Array.isArray(messages)) return invalidType('messages', 'an array of objects', messages);
  if (messages.length === 0) {
    return bad("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }
  const a = analyzeChat(messages);
  if (isReply(a)) return a;
  const names = chatToolNames(body.tools);
  if (isReply(names)) return names;
  const chosen = chosenTool(names, body.tool_choice);
  if (isReply(chosen)) return chosen;
  // A scripted call (`CALL <tool> <json arguments>` as the user's text) picks the tool and its arguments.
  const script = chosen !== undefined && a.lastRole === 'user' ? scriptedCall(a.lastUserText, names) : undefined;
  const tool = script?.name ?? chosen;
  const maxTokens = maxTokensOf(body, 'max_completion_tokens', 'max_tokens');
  if (isReply(maxTokens)) return maxTokens;
  const n = body.n === undefined || body.n === null ? 1 : body.n;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 128) return bad("Invalid 'n': expected an integer between 1 and 128.", 'n', 'invalid_value');
  const effort = body.reasoning_effort;
  if (effort !== undefined && effort !== null && typeof effort !== 'string') return invalidType('reasoning_effort', 'a string', effort);

  const promptTokens = countWords(a.allText.join(' '));
  const toolTurn = a.lastRole === 'tool' || a.lastRole === 'function';
  const subject = toolTurn ? toolReplyText(a.toolResults) : a.lastUserText;
  const reasoning = typeof effort === 'string' && effort !== 'none' ? countWords(thinkingText(subject)) : 0;
  const callTool = tool !== undefined && a.lastRole === 'user';

  const id = `chatcmpl-${ctx.nextId()}`;
  const created = nowSeconds();
  let text = '';
  let finish: string;
  let args = '';
  let callId = '';
  if (callTool) {
    args = script?.args ?? JSON.stringify({ query: a.lastUserText });
    callId = `call_${ctx.nextId()}`;
    finish = 'tool_calls';
  } else {
    const t = truncate(toolTurn ? subject : replyText(a.lastUserText, a.images), maxTokens, stopList(body.stop));
    text = t.text;
    finish = t.reason === 'length' ? 'length' : 'stop';
  }
  const completion = countWords(callTool ? args : text);
  const usage = chatUsage(promptTokens, completion * n, reasoning * n);

  if (body.stream !== true) {
    const message: JsonObject = callTool
      ? {
        role: 'assistant', content: null, refusal: null, annotations: [],
        tool_calls: [{ id: callId, type: 'function', function: { name: tool, arguments: args } }],
      }
      : { role: 'assistant', content: text, refusal: null, annotations: [] };
    const choices = [];
    for (let i = 0; i < n; i++) choices.push({ index: i, message, logprobs: null, finish_reason: finish });
    return json(200, {
      id, object: 'chat.completion', created, model, choices, usage,
      service_tier: 'default', system_fingerprint: 'fp_mock',
    });
  }

  const withUsage = includeUsage(body);
  const events: string[] = [];
  const chunk = (choices: unknown[]): string => dataEvent(withUsage
    ? { id, object: 'chat.completion.chunk', created, model, service_tier: 'default', system_fingerprint: 'fp_mock', choices, usage: null }
    : { id, object: 'chat.completion.chunk', created, model, service_tier: 'default', system_fingerprint: 'fp_mock', choices });
  for (let i = 0; i < n; i++) {
    if (callTool) {
      events.push(chunk([{
        index: i,
        delta: {
          role: 'assistant', content: null, refusal: null,
          tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: tool, arguments: '' } }],
        },
        logprobs: null, finish_reason: null,
      }]));
      for (const piece of splitPieces(args)) {
        events.push(chunk([{ index: i, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }]));
      }
    } else {
      events.push(chunk([{ index: i, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]));
      for (const piece of splitWords(text)) {
        events.push(chunk([{ index: i, delta: { content: piece }, logprobs: null, finish_reason: null }]));
      }
    }
    events.push(chunk([{ index: i, delta: {}, logprobs: null, finish_reason: finish }]));
  }
  if (withUsage) {
    events.push(dataEvent({ id, object: 'chat.completion.chunk', created, model, service_tier: 'default', system_fingerprint: 'fp_mock', choices: [], usage }));
  }
  events.push(DONE_EVENT);
  return sse(events, SSE_HEADERS);
}

// ---------------------------------------------------------------- legacy completions

function promptTexts(prompt: unknown): string[] | Reply {
  if (typeof prompt === 'string') return [prompt];
  if (Array.isArray(prompt)) {
    if (prompt.length === 0) return bad("Invalid 'prompt': empty array.", 'prompt', 'empty_array');
    if (prompt.every((p) => typeof p === 'string')) return prompt as string[];
    if (prompt.every((p) => typeof p === 'number')) return [prompt.join(' ')];
    if (prompt.every((p) => Array.isArray(p))) return prompt.map((p: unknown[]) => p.join(' '));
  }
  return invalidType('prompt', 'a string or array', prompt);
}

function completions(ctx: RequestContext): Reply {
  const pre = preflight(ctx, COMPLETION_PARAMS, 'chat');
  if (isReply(pre)) return pre;
  const { body, model } = pre;
  if (body.prompt === undefined || body.prompt === null) return missing('prompt');
  const prompts = promptTexts(body.prompt);
  if (isReply(prompts)) return prompts;
  const maxTokens = maxTokensOf(body, 'max_tokens');
  if (isReply(maxTokens)) return maxTokens;
  const stops = stopList(body.stop);
  const outs = prompts.map((p) => truncate(replyText(p, 0), maxTokens, stops));
  const promptTokens = countWords(prompts.join(' '));
  const completion = outs.reduce((s, o) => s + countWords(o.text), 0);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
  const id = `cmpl-${ctx.nextId()}`;
  const created = nowSeconds();
  const finishOf = (o: { reason: string }): string => (o.reason === 'length' ? 'length' : 'stop');
  if (body.stream !== true) {
    return json(200, {
      id, object: 'text_completion', created, model, system_fingerprint: 'fp_mock',
      choices: outs.map((o, index) => ({ text: o.text, index, logprobs: null, finish_reason: finishOf(o) })),
      usage,
    });
  }
  const withUsage = includeUsage(body);
  const events: string[] = [];
  const chunk = (choices: unknown[]): string => dataEvent(withUsage
    ? { id, object: 'text_completion', created, model, system_fingerprint: 'fp_mock', choices, usage: null }
    : { id, object: 'text_completion', created, model, system_fingerprint: 'fp_mock', choices });
  outs.forEach((o, index) => {
    for (const piece of splitWords(o.text)) events.push(chunk([{ text: piece, index, logprobs: null, finish_reason: null }]));
    events.push(chunk([{ text: '', index, logprobs: null, finish_reason: finishOf(o) }]));
  });
  if (withUsage) events.push(dataEvent({ id, object: 'text_completion', created, model, system_fingerprint: 'fp_mock', choices: [], usage }));
  events.push(DONE_EVENT);
  return sse(events, SSE_HEADERS);
}

// ---------------------------------------------------------------- embeddings

function embeddings(ctx: RequestContext): Reply {
  const pre = preflight(ctx, EMBEDDING_PARAMS, 'chat');
  if (isReply(pre)) return pre;
  const { body, model } = pre;
  const input = body.input;
  if (input === undefined || input === null) return missing('input');
  let texts: string[];
  if (typeof input === 'string') texts = [input];
  else if (Array.isArray(input) && input.length > 0 && input.every((s) => typeof s === 'string')) texts = input as string[];
  else if (Array.isArray(input) && input.length > 0 && input.every((s) => typeof s === 'number')) texts = [input.join(' ')];
  else if (Array.isArray(input) && input.length > 0 && input.every((s) => Array.isArray(s) && s.length > 0)) texts = input.map((s: unknown[]) => s.join(' '));
  else texts = [];
  if (texts.length === 0 || texts.some((t) => t === '')) {
    return bad("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.");
  }
  const fmt = body.encoding_format ?? 'float';
  if (fmt !== 'float' && fmt !== 'base64') return invalidValue('encoding_format', fmt, ['float', 'base64']);
  let dims = modelDimensions(model);
  if (body.dimensions !== undefined && body.dimensions !== null) {
    if (typeof body.dimensions !== 'number' || !Number.isInteger(body.dimensions) || body.dimensions < 1) {
      return bad("Invalid 'dimensions': expected a positive integer.", 'dimensions', 'invalid_value');
    }
    dims = body.dimensions;
  }
  const tokens = countWords(texts.join(' '));
  return json(200, {
    object: 'list',
    data: texts.map((t, index) => {
      const v = embed(t, dims);
      return { object: 'embedding', index, embedding: fmt === 'base64' ? embedBase64(v) : Array.from(v) };
    }),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

// ---------------------------------------------------------------- responses

interface ResponsesAnalysis {
  allText: string[];
  images: number;
  lastKind: 'user' | 'tool' | 'other';
  lastUserText: string;
  toolResults: string[];
}

const INPUT_PARTS = ['input_text', 'input_image', 'input_file', 'input_audio', 'output_text', 'refusal'];
const INPUT_ROLES = ['user', 'assistant', 'system', 'developer'];

function responsesText(content: unknown, param: string, out: { text: string[]; images: number }): Reply | undefined {
  if (typeof content === 'string') {
    out.text.push(content);
    return undefined;
  }
  if (!Array.isArray(content)) return invalidType(param, 'a string or array', content);
  for (let j = 0; j < content.length; j++) {
    const part: unknown = content[j];
    const p = `${param}[${j}]`;
    if (!isObject(part)) return invalidType(p, 'an object', part);
    if (typeof part.type !== 'string' || !INPUT_PARTS.includes(part.type)) return invalidValue(`${p}.type`, part.type, INPUT_PARTS);
    if (part.type === 'input_text' || part.type === 'output_text') {
      if (typeof part.text !== 'string') return missing(`${p}.text`);
      out.text.push(part.text);
    } else if (part.type === 'input_image') {
      if (typeof part.image_url !== 'string' && typeof part.file_id !== 'string') return missing(`${p}.image_url`);
      out.images++;
    }
  }
  return undefined;
}

function analyzeResponses(body: JsonObject): ResponsesAnalysis | Reply {
  const res: ResponsesAnalysis = { allText: [], images: 0, lastKind: 'other', lastUserText: '', toolResults: [] };
  if (typeof body.instructions === 'string') res.allText.push(body.instructions);
  const input = body.input;
  if (input === undefined || input === null) {
    if (body.previous_response_id === undefined && body.prompt === undefined && body.conversation === undefined) return missing('input');
    return res;
  }
  if (typeof input === 'string') {
    res.allText.push(input);
    res.lastUserText = input;
    res.lastKind = 'user';
    return res;
  }
  if (!Array.isArray(input)) return invalidType('input', 'a string or array', input);
  const calls = new Set<string>();
  const lenient = body.previous_response_id !== undefined || body.conversation !== undefined;
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const p = `input[${i}]`;
    if (!isObject(item)) return invalidType(p, 'an object', item);
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (typeof item.role !== 'string' || !INPUT_ROLES.includes(item.role)) return invalidValue(`${p}.role`, item.role, INPUT_ROLES);
      if (item.content === undefined) return missing(`${p}.content`);
      const collected = { text: [] as string[], images: 0 };
      const err = responsesText(item.content, `${p}.content`, collected);
      if (err) return err;
      res.allText.push(...collected.text);
      res.images += collected.images;
      if (item.role === 'user') {
        res.lastUserText = collected.text.join(' ');
        res.lastKind = 'user';
      } else res.lastKind = 'other';
      res.toolResults = [];
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string') return missing(`${p}.call_id`);
      if (typeof item.name !== 'string') return missing(`${p}.name`);
      if (typeof item.arguments !== 'string') return missing(`${p}.arguments`);
      calls.add(item.call_id);
      res.allText.push(item.arguments);
      res.lastKind = 'other';
      res.toolResults = [];
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') return missing(`${p}.call_id`);
      if (!lenient && !calls.has(item.call_id)) return bad(`No tool call found for function call output with call_id ${item.call_id}.`, 'input');
      const collected = { text: [] as string[], images: 0 };
      if (typeof item.output === 'string') collected.text.push(item.output);
      else {
        const err = responsesText(item.output, `${p}.output`, collected);
        if (err) return err;
      }
      res.allText.push(...collected.text);
      if (res.lastKind !== 'tool') res.toolResults = [];
      res.toolResults.push(collected.text.join(' '));
      res.lastKind = 'tool';
    } else {
      res.lastKind = 'other';
    }
  }
  return res;
}

function responsesToolNames(tools: unknown): string[] | Reply {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) return invalidType('tools', 'an array', tools);
  const names: string[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    if (!isObject(t)) return invalidType(`tools[${i}]`, 'an object', t);
    if (typeof t.type !== 'string') return missing(`tools[${i}].type`);
    if (t.type === 'function') {
      if (typeof t.name !== 'string' || !t.name) return missing(`tools[${i}].name`);
      names.push(t.name);
    }
  }
  return names;
}

function responses(ctx: RequestContext): Reply {
  const pre = preflight(ctx, RESPONSES_PARAMS, 'responses');
  if (isReply(pre)) return pre;
  const { body, model } = pre;
  const a = analyzeResponses(body);
  if (isReply(a)) return a;
  const names = responsesToolNames(body.tools);
  if (isReply(names)) return names;
  const tool = chosenTool(names, body.tool_choice);
  if (isReply(tool)) return tool;
  const maxTokens = maxTokensOf(body, 'max_output_tokens');
  if (isReply(maxTokens)) return maxTokens;
  const effort = isObject(body.reasoning) ? body.reasoning.effort : undefined;

  const subject = a.lastKind === 'tool' ? toolReplyText(a.toolResults) : a.lastUserText;
  const reasoningTokens = typeof effort === 'string' && effort !== 'none' ? countWords(thinkingText(subject)) : 0;
  const callTool = tool !== undefined && a.lastKind === 'user';
  const t = truncate(a.lastKind === 'tool' ? subject : replyText(a.lastUserText, a.images), maxTokens, []);
  const args = callTool ? JSON.stringify({ query: a.lastUserText }) : '';
  const inputTokens = countWords(a.allText.join(' '));
  const outputTokens = countWords(callTool ? args : t.text) + reasoningTokens;
  const incomplete = !callTool && t.reason === 'length';

  const respId = `resp_${ctx.nextId()}`;
  const created = nowSeconds();
  const outputs: JsonObject[] = [];
  const reasoningItem = reasoningTokens > 0 ? { id: `rs_${ctx.nextId()}`, type: 'reasoning', summary: [] } : undefined;
  if (reasoningItem) outputs.push(reasoningItem);
  const mainId = callTool ? `fc_${ctx.nextId()}` : `msg_${ctx.nextId()}`;
  const callId = `call_${ctx.nextId()}`;
  const textPart = { type: 'output_text', annotations: [], logprobs: [], text: t.text };
  const mainItem: JsonObject = callTool
    ? { id: mainId, type: 'function_call', status: 'completed', arguments: args, call_id: callId, name: tool }
    : { id: mainId, type: 'message', status: incomplete ? 'incomplete' : 'completed', role: 'assistant', content: [textPart] };
  outputs.push(mainItem);
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
  const responseObj = (status: string, output: JsonObject[], u: JsonObject | null): JsonObject => ({
    id: respId, object: 'response', created_at: created, status, background: false, error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: maxTokens ?? null, max_tool_calls: null, model, output,
    parallel_tool_calls: true, previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    reasoning: { effort: typeof effort === 'string' ? effort : null, summary: null },
    service_tier: 'default', store: body.store !== false, temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto', tools: Array.isArray(body.tools) ? body.tools : [], top_logprobs: 0, top_p: 1,
    truncation: 'disabled', usage: u, user: null, metadata: isObject(body.metadata) ? body.metadata : {},
  });
  const finalStatus = incomplete ? 'incomplete' : 'completed';
  if (body.stream !== true) return json(200, responseObj(finalStatus, outputs, usage));

  const events: string[] = [];
  let seq = 0;
  const ev = (type: string, payload: JsonObject): void => {
    events.push(namedEvent(type, { type, sequence_number: seq++, ...payload }));
  };
  ev('response.created', { response: responseObj('in_progress', [], null) });
  ev('response.in_progress', { response: responseObj('in_progress', [], null) });
  let index = 0;
  if (reasoningItem) {
    ev('response.output_item.added', { output_index: index, item: reasoningItem });
    ev('response.output_item.done', { output_index: index, item: reasoningItem });
    index++;
  }
  if (callTool) {
    ev('response.output_item.added', { output_index: index, item: { ...mainItem, status: 'in_progress', arguments: '' } });
    for (const piece of splitPieces(args)) {
      ev('response.function_call_arguments.delta', { item_id: mainId, output_index: index, delta: piece });
    }
    ev('response.function_call_arguments.done', { item_id: mainId, output_index: index, name: tool, arguments: args });
    ev('response.output_item.done', { output_index: index, item: mainItem });
  } else {
    ev('response.output_item.added', { output_index: index, item: { ...mainItem, status: 'in_progress', content: [] } });
    ev('response.content_part.added', { item_id: mainId, output_index: index, content_index: 0, part: { ...textPart, text: '' } });
    for (const piece of splitWords(t.text)) {
      ev('response.output_text.delta', { item_id: mainId, output_index: index, content_index: 0, delta: piece, logprobs: [] });
    }
    ev('response.output_text.done', { item_id: mainId, output_index: index, content_index: 0, text: t.text, logprobs: [] });
    ev('response.content_part.done', { item_id: mainId, output_index: index, content_index: 0, part: textPart });
    ev('response.output_item.done', { output_index: index, item: mainItem });
  }
  ev(incomplete ? 'response.incomplete' : 'response.completed', { response: responseObj(finalStatus, outputs, usage) });
  return sse(events, SSE_HEADERS);
}

// ---------------------------------------------------------------- responses input token count

const INPUT_TOKENS_PARAMS = new Set([
  'conversation', 'input', 'instructions', 'model', 'parallel_tool_calls', 'personality', 'previous_response_id',
  'reasoning', 'text', 'tool_choice', 'tools', 'truncation',
]);

/** POST /v1/responses/input_tokens: the words a Responses call with this body would be billed as input. */
function inputTokens(ctx: RequestContext): Reply {
  const pre = preflight(ctx, INPUT_TOKENS_PARAMS, 'responses');
  if (isReply(pre)) return pre;
  const a = analyzeResponses(pre.body);
  if (isReply(a)) return a;
  const names = responsesToolNames(pre.body.tools);
  if (isReply(names)) return names;
  return json(200, { object: 'response.input_tokens', input_tokens: countWords(a.allText.join(' ')) });
}

// ---------------------------------------------------------------- models

const MODELS_REPLY = rawJson(200, OPENAI_MODELS_BODY);
const MODEL_BODIES = new Map<string, string>(OPENAI_MODELS.map((m) => [m.id, JSON.stringify(m)]));

function retrieveModel(id: string): Reply {
  const body = MODEL_BODIES.get(id);
  if (body) return rawJson(200, body);
  return openaiError(404, `The model '${id}' does not exist`, { code: 'model_not_found', param: 'model' });
}

// ---------------------------------------------------------------- module

function bodyModel(body: unknown): string | undefined {
  return isObject(body) && typeof body.model === 'string' ? body.model : undefined;
}

const POST_ROUTES = new Map<string, (ctx: RequestContext) => Reply>([
  ['/v1/chat/completions', chat],
  ['/v1/completions', completions],
  ['/v1/embeddings', embeddings],
  ['/v1/responses', responses],
  ['/v1/responses/input_tokens', inputTokens],
  ['/v1/moderations', moderations],
  ['/v1/decisions', decisions],
]);
/** What batch lines may call. */
const BATCH_ENDPOINTS = new Map([...POST_ROUTES].filter(([p]) => p !== '/v1/responses/input_tokens'));

export const openai: FormatModule = {
  format: 'openai',
  route(method, path, body): Route | undefined {
    const files = openaiFilesRoute(method, path, openaiError, BATCH_ENDPOINTS);
    if (files) return files;
    const containers = openaiContainersRoute(method, path, openaiError);
    if (containers) return containers;
    const video = openaiVideoRoute(method, path, openaiError);
    if (video) return video;
    if (method === 'POST') {
      const handle = POST_ROUTES.get(path) ?? openaiMediaHandler(path);
      return handle ? { model: bodyModel(body), handle } : undefined;
    }
    if (method === 'GET') {
      if (path === '/v1/models') return { model: undefined, handle: () => MODELS_REPLY };
      if (path.startsWith('/v1/models/')) {
        const id = decodeURIComponent(path.slice('/v1/models/'.length));
        return { model: id, handle: () => retrieveModel(id) };
      }
    }
    return undefined;
  },
  authenticate(ctx) {
    const auth = ctx.headers.authorization;
    const m = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
    if (!m) {
      return openaiError(401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth " +
        '(i.e. Authorization: Bearer YOUR_KEY). You can obtain an API key from https://platform.openai.com/account/api-keys.',
        { code: null });
    }
    const key = m[1];
    if (key.startsWith('invalid')) {
      const masked = key.length > 8 ? `${key.slice(0, 3)}${'*'.repeat(Math.min(key.length - 7, 20))}${key.slice(-4)}` : '***';
      return openaiError(401, `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`);
    }
    return undefined;
  },
  error: openaiError,
  notFound(method, path) {
    return openaiError(404, `Invalid URL (${method} ${path})`, { code: null });
  },
};
