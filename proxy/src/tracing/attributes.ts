// What a request's span says, from its context once the answer is complete: the GenAI semantic
// conventions' attributes (https://opentelemetry.io/docs/specs/semconv/gen-ai/) and the gateway's
// own (skybridge.*). Pure: context and outcome in, attributes out. Ids and names only, never a key
// or a header value; prompt and answer text only when content capture is on.
import type { Attributes } from '@opentelemetry/api';
import { ObjectSink, type AttributeSink } from './attribute-sink.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { answerCost } from '../governance/cost.ts';
import type { Writable } from './tracer.ts';

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

/** Facts a stream's taps gathered (the last chunk's finish reason, the answering model, text when captured). */
export interface StreamFacts {
  finishReasons: string[] | undefined;
  responseModel: string | undefined;
  output: string | undefined;
}

/**
 * What a request's span says, captured from its context as the answer completes: values and
 * references the context already holds, and the answer's facts read off the parsed answer. Its
 * attributes and name are made at export (`settle`, in the export's batch), not on the answer's
 * path. Nothing captured is a key or a header value; content only when capture is on.
 */
export class RequestRecord implements Writable {
  readonly operation: string;
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly parentRequestId: string | undefined;
  readonly status: number;
  readonly requestId: string;
  readonly requestType: string;
  readonly requestModel: string | undefined;
  readonly provider: string;
  readonly model: string | undefined;
  readonly fallbackIndex: number;
  readonly retries: number;
  readonly keyId: string | undefined;
  readonly vk: RequestContext['vk'];
  readonly routing: RequestContext['routing'];
  readonly cache: { cache_hit?: unknown; hit_type?: unknown } | undefined;
  readonly usage: RequestContext['usage'];
  /** An agent request: its turns' sums (the totals object is done with once the request ends). */
  readonly turns: RequestContext['turns'];
  readonly cost: number | undefined;
  readonly failed: boolean;
  readonly answer: AnswerFacts;
  readonly error: RequestContext['error'];
  readonly input: string | undefined;
  readonly output: string | undefined;

  constructor(ctx: RequestContext, result: Outcome, facts: StreamFacts | undefined, captureContent: boolean) {
    this.operation = ctx.operation;
    const req = ctx.http?.req;
    this.method = req?.method;
    this.url = req?.url;
    this.parentRequestId = ctx.parentRequestId;
    this.status = ctx.status;
    this.requestId = ctx.requestId;
    this.requestType = ctx.requestType;
    const scope = ctx.scope;
    this.requestModel = scope.kind === 'model' ? scope.model : undefined;
    this.provider = ctx.provider;
    this.model = ctx.model;
    this.fallbackIndex = ctx.fallbackIndex;
    this.retries = ctx.retries;
    this.keyId = ctx.keyId;
    this.vk = ctx.vk;
    this.routing = ctx.routing;
    this.cache = ctx.finalExtra?.cache_debug as RequestRecord['cache'];
    this.usage = ctx.usage;
    this.turns = ctx.turns;
    // Priced once per request (memoised on the context: the logs stage asked already).
    this.cost = ctx.turns && ctx.turns.turns > 0 ? undefined : typeof ctx.costMemo === 'number' ? ctx.costMemo : !ctx.usage || !ctx.model || ctx.provider === 'none' ? undefined : answerCost(ctx);
    this.failed = result.kind === 'error';
    this.answer = answerFacts(result, facts, captureContent);
    this.error = ctx.error;
    this.input = captureContent ? inputMessages(ctx) : undefined;
    this.output = captureContent ? (this.answer.output ?? facts?.output) : undefined;
  }

  /** Sets the attributes on `a`; returns the span's name. */
  settle(a: Attributes): string {
    this.write(new ObjectSink(a));
    return this.spanName();
  }

  spanName(): string {
    return spanName(genAiOperation(this.operation), this.requestModel);
  }

  /** The attributes, each once: GenAI conventions first, the gateway's own (skybridge.*) beside them. */
  write(a: AttributeSink): void {
    const operation = genAiOperation(this.operation);
    a.set('gen_ai.operation.name', operation);
    a.set('skybridge.operation', this.operation);
    if (this.method) a.set('http.request.method', this.method);
    const url = this.url;
    if (url) {
      const query = url.indexOf('?');
      a.set('url.path', query < 0 ? url : url.slice(0, query));
    }
    if (this.parentRequestId) a.set('skybridge.parent_request_id', this.parentRequestId);
    a.set('http.response.status_code', this.status);
    a.set('skybridge.request.id', this.requestId);
    if (this.requestType) a.set('skybridge.request_type', this.requestType);
    if (this.requestModel !== undefined) a.set('gen_ai.request.model', this.requestModel);
    if (this.provider !== 'none') {
      a.set('gen_ai.provider.name', genAiProvider(this.provider));
      a.set('skybridge.provider', this.provider);
    }
    if (this.model) a.set('skybridge.model', this.model);
    if (this.fallbackIndex) a.set('skybridge.fallback_index', this.fallbackIndex);
    if (this.retries) a.set('skybridge.retries', this.retries);
    if (this.keyId) a.set('skybridge.provider_key.id', this.keyId);
    governance(this.vk, this.routing, a);
    const cache = this.cache;
    if (cache) {
      a.set('skybridge.cache.hit', cache.cache_hit === true);
      if (cache.cache_hit === true && typeof cache.hit_type === 'string') a.set('skybridge.cache.hit_type', cache.hit_type);
    }
    this.#usage(a);
    const answer = this.answer;
    if (answer.model) a.set('gen_ai.response.model', answer.model);
    else if (this.model && !this.failed) a.set('gen_ai.response.model', this.model);
    if (answer.id) a.set('gen_ai.response.id', answer.id);
    if (answer.finishReasons?.length) a.set('gen_ai.response.finish_reasons', answer.finishReasons);
    const error = this.error;
    if (error) {
      a.set('error.type', error.type || String(error.status));
      if (error.code) a.set('skybridge.error.code', error.code);
    }
    if (this.input !== undefined) a.set('gen_ai.input.messages', this.input);
    if (this.output !== undefined) a.set('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: this.output }] }]));
  }

  #usage(a: AttributeSink): void {
    const turns = this.turns;
    if (turns && turns.turns > 0) {
      a.set('gen_ai.usage.input_tokens', turns.promptTokens);
      a.set('gen_ai.usage.output_tokens', turns.completionTokens);
      a.set('skybridge.agent.turns', turns.turns);
      if (!turns.unpriced) a.set('skybridge.cost.usd', turns.cost);
      return;
    }
    const u = this.usage;
    if (!u) return;
    a.set('gen_ai.usage.input_tokens', u.prompt_tokens);
    a.set('gen_ai.usage.output_tokens', u.completion_tokens);
    const cached = u.prompt_tokens_details?.cached_tokens;
    if (cached) a.set('gen_ai.usage.cache_read.input_tokens', cached);
    if (this.cost !== undefined) a.set('skybridge.cost.usd', this.cost);
  }
}

/** An upstream attempt's span: what it was sent to, and how it ended; attributes made at export. */
export class AttemptRecord implements Writable {
  /** gen_ai.operation.name's value. */
  readonly operation: string;
  readonly provider: string;
  readonly model: string;
  readonly attempt: number;
  readonly fallbackIndex: number;
  status = 0;
  keyId: string | undefined = undefined;
  errorType: string | undefined = undefined;

  constructor(operation: string, provider: string, model: string, attempt: number, fallbackIndex: number) {
    this.operation = operation;
    this.provider = provider;
    this.model = model;
    this.attempt = attempt;
    this.fallbackIndex = fallbackIndex;
  }

  /** Sets the attributes on `a`; returns the span's name. */
  settle(a: Attributes): string {
    this.write(new ObjectSink(a));
    return this.spanName();
  }

  /** `{operation} {model}`. */
  spanName(): string {
    return spanName(this.operation, this.model);
  }

  write(a: AttributeSink): void {
    a.set('gen_ai.operation.name', this.operation);
    a.set('gen_ai.provider.name', genAiProvider(this.provider));
    a.set('gen_ai.request.model', this.model);
    a.set('skybridge.provider', this.provider);
    a.set('skybridge.attempt', this.attempt);
    a.set('skybridge.fallback_index', this.fallbackIndex);
    a.set('http.response.status_code', this.status);
    if (this.keyId) a.set('skybridge.provider_key.id', this.keyId);
    if (this.errorType !== undefined) a.set('error.type', this.errorType);
  }
}

function governance(vk: RequestContext['vk'], routing: RequestContext['routing'], a: AttributeSink): void {
  if (vk) {
    a.set('skybridge.virtual_key.id', vk.record.id);
    a.set('skybridge.virtual_key.name', vk.record.name);
    const teamId = vk.team?.id ?? vk.record.team_id;
    if (teamId) a.set('skybridge.team.id', teamId);
    if (vk.team?.name) a.set('skybridge.team.name', vk.team.name);
    const customerId = vk.customer?.id ?? vk.record.customer_id ?? vk.team?.customer_id;
    if (customerId) a.set('skybridge.customer.id', customerId);
    if (vk.customer?.name) a.set('skybridge.customer.name', vk.customer.name);
  }
  if (routing) {
    const ids = [...new Set(routing.trail.filter((s) => s.matched && s.ruleId).map((s) => s.ruleId!))];
    if (ids.length) a.set('skybridge.routing.rule_ids', ids);
    if (routing.ruleName) a.set('skybridge.routing.rule_name', routing.ruleName);
  }
}

interface AnswerFacts {
  model?: string | undefined;
  id?: string | undefined;
  finishReasons?: string[] | undefined;
  output?: string | undefined;
}

/** Answers larger than this are not parsed again for their finish reasons (the span goes without them). */
const MAX_PARSED_ANSWER = 1 << 20;

/** An answer relayed as JSON text read without parsing it: its top-level id (first member), model and choices' finish reasons. */
const TOP_ID = /^\{\s*"id":\s*"([^"\\]{1,256})"/;
const MODEL = /"model":\s*"([^"\\]{1,256})"/;
const FINISH_REASONS = /"finish_reason":\s*"([A-Za-z_]+)"/g;

const NO_FACTS: AnswerFacts = {};

/**
 * The answer's model, id and finish reasons (and text, when content is captured): from the stream's
 * taps, else off the answer as the pipeline parsed it (a relayed text answer carries its parse);
 * only an answer whose parse is not at hand (a cache hit's stored text) is scanned or parsed here.
 */
function answerFacts(result: Outcome, facts: StreamFacts | undefined, captureContent: boolean): AnswerFacts {
  if (facts) return { model: facts.responseModel, finishReasons: facts.finishReasons };
  let body: unknown;
  if (result.kind === 'json') body = result.value;
  else if (result.kind === 'text') {
    if (result.parsed !== undefined) body = result.parsed;
    else if (result.text.length > MAX_PARSED_ANSWER) return NO_FACTS;
    else if (!captureContent) {
      // Read off the text, not parsed a second time. (An escaped quote inside content cannot match: it is preceded by `\`.)
      const text = result.text;
      const reasons = Array.from(text.matchAll(FINISH_REASONS), (m) => m[1]!);
      if (reasons.length) return { finishReasons: reasons, model: MODEL.exec(text)?.[1], id: TOP_ID.exec(text)?.[1] };
    }
    if (body === undefined && result.text.startsWith('{')) {
      try {
        body = JSON.parse(result.text);
      } catch {
        return NO_FACTS;
      }
    }
  }
  if (!body || typeof body !== 'object') return NO_FACTS;
  const b = body as { id?: unknown; model?: unknown; choices?: unknown; status?: unknown; output?: unknown; stop_reason?: unknown };
  const out: AnswerFacts = { model: typeof b.model === 'string' ? b.model : undefined, id: typeof b.id === 'string' ? b.id : undefined };
  if (Array.isArray(b.choices)) {
    const choices = b.choices as { finish_reason?: unknown; message?: { content?: unknown }; text?: unknown }[];
    let reasons: string[] | undefined;
    for (const c of choices) if (typeof c?.finish_reason === 'string') (reasons ??= []).push(c.finish_reason);
    out.finishReasons = reasons;
    if (captureContent) {
      const text = choices.map((c) => c?.message?.content ?? c?.text).filter((t): t is string => typeof t === 'string');
      if (text.length) out.output = text.join('\n');
    }
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
