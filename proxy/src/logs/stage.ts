// The logging plugin: one request log record per request, built in `after` from what the stages
// put on the context and handed to the writer's bounded queue (never awaited, never on the answer's
// path). Ids and names only: neither a provider key's value nor a virtual key's secret is read here.
// Content (the request, the answer) is kept only when content logging is on, capped.
import type { Snapshot } from '../config/snapshot.ts';
import { answerCost } from '../governance/cost.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { Stage, StageFactory } from '../pipeline/stage.ts';
import { OPERATION_BY_NAME } from '../unified/operations.ts';
import { capContent, DEFAULT_CONTENT_CAP, errorClass, type LogRecord, type RoutingEngine } from './record.ts';
import { BF_HEADERS } from '../bf-headers.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    /** Where request log records go (the writer of the logs store), when request logging is on. */
    logs?: { enqueue(record: LogRecord): boolean };
  }
  interface RequestContext {
    /** Facts a route knows about its request that no column holds (a realtime session's audio seconds, its close code): kept in the record's metadata. */
    logMetadata?: Record<string, string>;
  }
}

export interface LoggingOptions {
  /** Keep request and answer content (capped). */
  content: boolean;
  /** Characters kept of each of input and output content. */
  contentCap?: number;
}

/** Output text of streamed items, per request, only while content logging collects it. */
const streamed = new WeakMap<RequestContext, string[]>();

/** Records go to the services' log sink (the writer of the store opened at start); none: nothing is built. */
export function loggingStage(opts: LoggingOptions): Stage {
  const cap = opts.contentCap ?? DEFAULT_CONTENT_CAP;
  const stage: Stage = {
    name: 'logging',
    after(ctx, result) {
      const sink = ctx.services.logs;
      // An agent turn adds its usage and cost to its agent request's record (the one counted) and is
      // written as a child of it (parent_request_id): listed under it, never counted on its own.
      if (ctx.turnOf) ctx.turnOf.add(ctx.usage, ctx.usage && costFor(ctx));
      if (sink) sink.enqueue(buildRecord(ctx, result, opts.content ? cap : undefined));
      else streamed.delete(ctx);
    },
  };
  if (opts.content) {
    stage.tap = (ctx, item) => {
      const text = deltaText(item);
      if (text === undefined) return;
      let parts = streamed.get(ctx);
      if (!parts) streamed.set(ctx, (parts = []));
      parts.push(text);
    };
  }
  return stage;
}

/** The `logging` entry of the plugin registry: `config.disable_content_logging` as the reference has it, else the client's. */
export const loggingPlugin: StageFactory = (config, snapshot) => {
  const own = (config as { disable_content_logging?: unknown } | undefined)?.disable_content_logging;
  return loggingStage({ content: !(typeof own === 'boolean' ? own : contentLoggingOff(snapshot)) });
};

export function contentLoggingOff(snapshot: Snapshot): boolean {
  return snapshot.config.client?.disable_content_logging === true;
}

/**
 * Request logging is on for this snapshot: by default, unless client.enable_logging is false or
 * logs_store is disabled (the store itself is opened at start; without one the stage writes nothing).
 */
export function loggingEnabled(snapshot: Snapshot): boolean {
  const c = snapshot.config;
  if (c.client?.enable_logging === false) return false;
  return c.client?.enable_logging === true || (c.logs_store ? c.logs_store.enabled : true);
}

export function buildRecord(ctx: RequestContext, result: Outcome, contentCap: number | undefined): LogRecord {
  const now = Date.now();
  const latency = performance.now() - ctx.started;
  const scope = ctx.scope;
  const vk = ctx.vk;
  const usage = ctx.usage;
  const failed = result.kind === 'error' || ctx.status >= 400;
  const routing = ctx.routing;
  const record: LogRecord = {
    id: ctx.id,
    request_id: ctx.requestId,
    timestamp: Math.round(now - latency),
    // The request type as logs name it (reference `object`): the table's logObject where it has one.
    object: OPERATION_BY_NAME.get(ctx.operation)?.logObject ?? (ctx.requestType || ctx.operation),
    status: failed ? 'error' : 'success',
    stream: result.kind === 'stream',
    latency: Math.round(latency * 100) / 100,
    number_of_retries: ctx.retries,
    fallback_index: ctx.fallbackIndex,
  };
  if (ctx.parentRequestId) record.parent_request_id = ctx.parentRequestId;
  const statusCode = failed ? (ctx.error?.status ?? ctx.status) : ctx.status;
  record.status_code = statusCode;
  if (failed) record.error_class = errorClass(statusCode, ctx.error?.upstream ?? false, ctx.error?.type);
  // What the response cache did, as the answer's last extra_fields carried it.
  const cacheDebug = ctx.finalExtra?.cache_debug;
  if (cacheDebug) record.cache_debug = cacheDebug;
  if ((cacheDebug as { cache_hit?: unknown } | undefined)?.cache_hit === true) {
    record.cache_hit = true;
    // Its price is spend saved, not spent: the stores' totals keep the two apart by cache_hit.
    if (ctx.savedCost !== undefined) record.cost = ctx.savedCost;
  }
  const metadata = loggedHeaders(ctx);
  if (metadata || ctx.logMetadata) record.metadata = { ...metadata, ...ctx.logMetadata };
  if (ctx.provider !== 'none') record.provider = ctx.provider;
  if (ctx.model) record.model = ctx.model;
  if (scope.kind === 'model') record.requested_model = scope.model;
  if (vk) {
    record.virtual_key_id = vk.record.id;
    record.virtual_key_name = vk.record.name;
    const teamId = vk.team?.id ?? vk.record.team_id;
    if (teamId) record.team_id = teamId;
    const customerId = vk.customer?.id ?? vk.record.customer_id ?? vk.team?.customer_id;
    if (customerId) record.customer_id = customerId;
  }
  if (ctx.keyId) {
    record.selected_key_id = ctx.keyId;
    const name = ctx.snapshot.providers.get(ctx.provider)?.keys.find((k) => k.id === ctx.keyId)?.name;
    if (name) record.selected_key_name = name;
  }
  const engines: RoutingEngine[] = [];
  if (routing) {
    const ids = [...new Set(routing.trail.filter((s) => s.matched && s.ruleId).map((s) => s.ruleId!))];
    if (ids.length) record.routing_rule_ids = ids;
    if (routing.ruleName) record.routing_rule_name = routing.ruleName;
    if (routing.matched) engines.push('routing-rule');
    if (routing.trail.length) record.routing_engine_logs = routing.error ? { trail: routing.trail, error: routing.error } : routing.trail;
  }
  if (vk && !routing?.matched && vk.grants.length) engines.push('governance');
  if (engines.length) record.routing_engines_used = engines;
  if (failed && ctx.error) {
    const e = ctx.error;
    record.error_details = { status: e.status, message: e.message, type: e.type, ...(e.code && { code: e.code }), ...(e.param && { param: e.param }) };
  }
  const turns = ctx.turns;
  if (turns && turns.turns > 0) {
    // An agent request: the sums of its turns (each turn was charged on its own).
    record.prompt_tokens = turns.promptTokens;
    record.completion_tokens = turns.completionTokens;
    record.total_tokens = turns.totalTokens;
    if (turns.cachedTokens) record.cached_tokens = turns.cachedTokens;
    if (!turns.unpriced) record.cost = turns.cost;
  } else if (usage) {
    record.prompt_tokens = usage.prompt_tokens;
    record.completion_tokens = usage.completion_tokens;
    record.total_tokens = usage.total_tokens || usage.prompt_tokens + usage.completion_tokens;
    const cached = usage.prompt_tokens_details?.cached_tokens;
    if (cached) record.cached_tokens = cached;
    const cost = costFor(ctx);
    if (cost !== undefined) record.cost = cost;
  }
  if (ctx.firstChunkAt !== undefined) record.ttft = Math.round((ctx.firstChunkAt - ctx.started) * 100) / 100;
  if (contentCap !== undefined) {
    record.input_content = capContent(inputText(ctx), contentCap);
    record.output_content = capContent(outputText(ctx, result), contentCap);
  }
  return record;
}

/** Prefix of request headers logged as metadata without being configured (the reference's). */
const LOGGED_PREFIX = BF_HEADERS.logMetadata.name;

/** client.logging_headers lowercased, per snapshot. */
const loggingHeaders = new WeakMap<Snapshot, readonly string[]>();

/**
 * Request headers kept in the record's metadata: those client.logging_headers names (by name) and
 * any `x-bf-lh-<name>` header (as <name>). Values are capped; a credential header is never logged,
 * whatever the configuration says.
 */
function loggedHeaders(ctx: RequestContext): Record<string, string> | undefined {
  let names = loggingHeaders.get(ctx.snapshot);
  if (!names) {
    const configured = ctx.snapshot.config.client?.logging_headers ?? [];
    names = configured.map((h) => h.toLowerCase()).filter((h) => !SECRET_HEADERS.has(h));
    loggingHeaders.set(ctx.snapshot, names);
  }
  let out: Record<string, string> | undefined;
  const put = (key: string, value: string | string[] | undefined) => {
    if (value === undefined) return;
    (out ??= Object.create(null) as Record<string, string>)[key] = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_HEADER_VALUE);
  };
  for (const name of names) put(name, ctx.headers[name]);
  for (const name in ctx.headers) {
    if (name.startsWith(LOGGED_PREFIX) && name.length > LOGGED_PREFIX.length) put(name.slice(LOGGED_PREFIX.length), ctx.headers[name]);
  }
  return out;
}

const MAX_HEADER_VALUE = 1024;
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'x-bf-vk', 'api-key', 'x-goog-api-key', 'cookie']);

/** The budget's price of this answer (undefined when the model has no known price). */
function costFor(ctx: RequestContext): number | undefined {
  // A price set by the route itself (governance/cost.ts chargeFixedCost: a container session) names no model.
  if (typeof ctx.costMemo === 'number') return ctx.costMemo;
  return !ctx.model || ctx.provider === 'none' ? undefined : answerCost(ctx);
}

function inputText(ctx: RequestContext): string | undefined {
  const body = ctx.request ?? ctx.input;
  if (body === undefined) return undefined;
  return stringify(body);
}

function outputText(ctx: RequestContext, result: Outcome): string | undefined {
  switch (result.kind) {
    case 'json':
      return stringify(result.value);
    case 'text':
      return result.text;
    case 'stream': {
      const parts = streamed.get(ctx);
      streamed.delete(ctx);
      return parts?.join('');
    }
    default:
      // Bytes (audio, files, a passthrough answer) are relayed unread: there is no copy to keep.
      return undefined;
  }
}

function stringify(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

/**
 * The text a streamed item adds: a chat/text chunk's delta, a responses text delta. A chunk relayed
 * as upstream JSON text (`{json}`, the OpenAI-to-OpenAI path that never parses) is parsed here, only
 * because content logging asked for it. Native re-encoded events are not read back.
 */
function deltaText(item: unknown): string | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const relayed = (item as { json?: unknown }).json;
  if (typeof relayed === 'string') {
    try {
      return deltaText(JSON.parse(relayed));
    } catch {
      return undefined;
    }
  }
  const o = item as { choices?: { delta?: { content?: unknown }; text?: unknown }[]; type?: unknown; delta?: unknown };
  const c = o.choices?.[0];
  if (c) {
    const t = c.delta?.content ?? c.text;
    return typeof t === 'string' ? t : undefined;
  }
  if (o.type === 'response.output_text.delta' && typeof o.delta === 'string') return o.delta;
  return undefined;
}
