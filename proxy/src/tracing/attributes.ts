// What a request's span says, from its context once the answer is complete: the GenAI semantic
// conventions' attributes (https://opentelemetry.io/docs/specs/semconv/gen-ai/) and the gateway's
// own (skybridge.*). Pure: context and outcome in, attributes out. Ids and names only, never a key
// or a header value; prompt and answer text only when content capture is on.
import type { Attributes } from '@opentelemetry/api';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { answerCost } from '../governance/cost.ts';

/** gen_ai.operation.name for the operations the conventions name; the others keep the gateway's name. */
const GENAI_OPERATIONS: Readonly<Record<string, string>> = {
  chat: 'chat',
  responses: 'chat',
  text: 'text_completion',
  embeddings: 'embeddings',
};

/** gen_ai.provider.name's well-known values, by the built-in provider kind's name. */
const GENAI_PROVIDERS: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
  cohere: 'cohere',
  mistral: 'mistral_ai',
  groq: 'groq',
  xai: 'x_ai',
  perplexity: 'perplexity',
  deepseek: 'deepseek',
};

export function genAiOperation(operation: string): string {
  return GENAI_OPERATIONS[operation] ?? operation;
}

/** The conventions' provider name: a built-in's well-known value, else the provider's configured name (a custom provider). */
export function genAiProvider(name: string): string {
  return GENAI_PROVIDERS[name] ?? name;
}

/** A span's name: `{operation} {model}` (the conventions' form), or the operation alone. */
export function spanName(operation: string, model: string | undefined): string {
  return model ? `${operation} ${model}` : operation;
}

/** What is known as the request starts: the operation and, once read, the model asked for. */
export function startAttributes(ctx: RequestContext): Attributes {
  const a: Attributes = { 'gen_ai.operation.name': genAiOperation(ctx.operation), 'skybridge.operation': ctx.operation };
  const req = ctx.http?.req;
  if (req) {
    if (req.method) a['http.request.method'] = req.method;
    const url = req.url;
    if (url) a['url.path'] = url.split('?', 1)[0];
  }
  if (ctx.parentRequestId) a['skybridge.parent_request_id'] = ctx.parentRequestId;
  return a;
}

/** Facts a stream's taps gathered (the last chunk's finish reason, the answering model, text when captured). */
export interface StreamFacts {
  finishReasons: string[] | undefined;
  responseModel: string | undefined;
  output: string | undefined;
}

/** Everything the request decided and used, once its answer is complete. */
export function endAttributes(ctx: RequestContext, result: Outcome, facts: StreamFacts | undefined, captureContent: boolean): Attributes {
  const a: Attributes = { 'http.response.status_code': ctx.status, 'skybridge.request.id': ctx.requestId };
  if (ctx.requestType) a['skybridge.request_type'] = ctx.requestType;
  const scope = ctx.scope;
  if (scope.kind === 'model') a['gen_ai.request.model'] = scope.model;
  if (ctx.provider !== 'none') {
    a['gen_ai.provider.name'] = genAiProvider(ctx.provider);
    a['skybridge.provider'] = ctx.provider;
  }
  if (ctx.model) a['skybridge.model'] = ctx.model;
  if (ctx.fallbackIndex) a['skybridge.fallback_index'] = ctx.fallbackIndex;
  if (ctx.retries) a['skybridge.retries'] = ctx.retries;
  if (ctx.keyId) a['skybridge.provider_key.id'] = ctx.keyId;
  governance(ctx, a);
  const cache = ctx.finalExtra?.cache_debug as { cache_hit?: unknown; hit_type?: unknown } | undefined;
  if (cache) {
    a['skybridge.cache.hit'] = cache.cache_hit === true;
    if (cache.cache_hit === true && typeof cache.hit_type === 'string') a['skybridge.cache.hit_type'] = cache.hit_type;
  }
  usage(ctx, a);
  const answer = answerFacts(result, facts, captureContent);
  if (answer.model) a['gen_ai.response.model'] = answer.model;
  else if (ctx.model && result.kind !== 'error') a['gen_ai.response.model'] = ctx.model;
  if (answer.id) a['gen_ai.response.id'] = answer.id;
  if (answer.finishReasons?.length) a['gen_ai.response.finish_reasons'] = answer.finishReasons;
  if (ctx.error) {
    a['error.type'] = ctx.error.type || String(ctx.error.status);
    if (ctx.error.code) a['skybridge.error.code'] = ctx.error.code;
  }
  if (captureContent) {
    const input = inputMessages(ctx);
    if (input !== undefined) a['gen_ai.input.messages'] = input;
    const output = answer.output ?? facts?.output;
    if (output !== undefined) a['gen_ai.output.messages'] = JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: output }] }]);
  }
  return a;
}

function governance(ctx: RequestContext, a: Attributes): void {
  const vk = ctx.vk;
  if (vk) {
    a['skybridge.virtual_key.id'] = vk.record.id;
    a['skybridge.virtual_key.name'] = vk.record.name;
    const teamId = vk.team?.id ?? vk.record.team_id;
    if (teamId) a['skybridge.team.id'] = teamId;
    if (vk.team?.name) a['skybridge.team.name'] = vk.team.name;
    const customerId = vk.customer?.id ?? vk.record.customer_id ?? vk.team?.customer_id;
    if (customerId) a['skybridge.customer.id'] = customerId;
    if (vk.customer?.name) a['skybridge.customer.name'] = vk.customer.name;
  }
  const routing = ctx.routing;
  if (routing) {
    const ids = [...new Set(routing.trail.filter((s) => s.matched && s.ruleId).map((s) => s.ruleId!))];
    if (ids.length) a['skybridge.routing.rule_ids'] = ids;
    if (routing.ruleName) a['skybridge.routing.rule_name'] = routing.ruleName;
  }
}

function usage(ctx: RequestContext, a: Attributes): void {
  const turns = ctx.turns;
  if (turns && turns.turns > 0) {
    a['gen_ai.usage.input_tokens'] = turns.promptTokens;
    a['gen_ai.usage.output_tokens'] = turns.completionTokens;
    a['skybridge.agent.turns'] = turns.turns;
    if (!turns.unpriced) a['skybridge.cost.usd'] = turns.cost;
    return;
  }
  const u = ctx.usage;
  if (!u) return;
  a['gen_ai.usage.input_tokens'] = u.prompt_tokens;
  a['gen_ai.usage.output_tokens'] = u.completion_tokens;
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (cached) a['gen_ai.usage.cache_read.input_tokens'] = cached;
  const cost = typeof ctx.costMemo === 'number' ? ctx.costMemo : !ctx.model || ctx.provider === 'none' ? undefined : answerCost(ctx);
  if (cost !== undefined) a['skybridge.cost.usd'] = cost;
}

interface AnswerFacts {
  model?: string;
  id?: string;
  finishReasons?: string[];
  output?: string;
}

/** Answers larger than this are not parsed again for their finish reasons (the span goes without them). */
const MAX_PARSED_ANSWER = 1 << 20;

/** An answer relayed as JSON text read without parsing it: its top-level id (first member), model and choices' finish reasons. */
const TOP_ID = /^\{\s*"id":\s*"([^"\\]{1,256})"/;
const MODEL = /"model":\s*"([^"\\]{1,256})"/;
const FINISH_REASONS = /"finish_reason":\s*"([A-Za-z_]+)"/g;

function answerFacts(result: Outcome, facts: StreamFacts | undefined, captureContent: boolean): AnswerFacts {
  if (facts) return { ...(facts.responseModel && { model: facts.responseModel }), ...(facts.finishReasons && { finishReasons: facts.finishReasons }) };
  if (result.kind === 'text' && !captureContent && result.text.length <= MAX_PARSED_ANSWER) {
    // A chat answer relayed as text (the usual OpenAI-format case): the facts are read off it, not
    // parsed a second time. (An escaped quote inside content cannot match: it is preceded by `\`.)
    const text = result.text;
    const reasons = Array.from(text.matchAll(FINISH_REASONS), (m) => m[1]);
    if (reasons.length) {
      const out: AnswerFacts = { finishReasons: reasons };
      const model = MODEL.exec(text)?.[1];
      if (model) out.model = model;
      const id = TOP_ID.exec(text)?.[1];
      if (id) out.id = id;
      return out;
    }
  }
  let body: unknown;
  if (result.kind === 'json') body = result.value;
  else if (result.kind === 'text' && result.text.length <= MAX_PARSED_ANSWER && result.text.startsWith('{')) {
    try {
      body = JSON.parse(result.text);
    } catch {
      return {};
    }
  }
  if (!body || typeof body !== 'object') return {};
  const b = body as { id?: unknown; model?: unknown; choices?: unknown; status?: unknown; output?: unknown; stop_reason?: unknown };
  const out: AnswerFacts = {};
  if (typeof b.model === 'string') out.model = b.model;
  if (typeof b.id === 'string') out.id = b.id;
  if (Array.isArray(b.choices)) {
    const reasons = b.choices.map((c) => (c as { finish_reason?: unknown }).finish_reason).filter((r): r is string => typeof r === 'string');
    if (reasons.length) out.finishReasons = reasons;
    const text = b.choices
      .map((c) => (c as { message?: { content?: unknown }; text?: unknown }).message?.content ?? (c as { text?: unknown }).text)
      .filter((t): t is string => typeof t === 'string');
    if (text.length) out.output = text.join('\n');
  } else if (typeof b.status === 'string' && Array.isArray(b.output)) {
    // A Responses API answer: its status is what finishes it.
    out.finishReasons = [b.status];
  } else if (typeof b.stop_reason === 'string') {
    out.finishReasons = [b.stop_reason];
  }
  return out;
}

function inputMessages(ctx: RequestContext): string | undefined {
  const body = (ctx.request ?? ctx.input) as { messages?: unknown; input?: unknown; prompt?: unknown } | undefined;
  if (!body || typeof body !== 'object') return undefined;
  const v = body.messages ?? body.input ?? body.prompt;
  if (v === undefined) return undefined;
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}
