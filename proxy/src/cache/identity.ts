// Who may read an entry and which request it answers (spec "Cache behavior" 1-3): the scope is the
// virtual key, the cache key, the model and provider (per cache_by_model / cache_by_provider), the
// wire format the answer went out in, and every parameter except the input; the hash is the
// canonical request (input, parameters, stream flag). Semantic lookups search one scope, so a
// similar question only ever finds an answer of the same parameters and format.
import type { RequestContext } from '../pipeline/context.ts';
import { canonicalPair, sha256Hex } from './canonical.ts';
import type { ResolvedCacheConfig } from './settings.ts';

export interface CacheIdentity {
  cacheKey: string;
  scope: string;
  hash: string;
  /** The text a semantic lookup embeds ('' when the request has none). */
  text: string;
  provider: string;
  model: string;
}

/** Request members that hold the input (left out of the scope, kept in the hash). */
const INPUT_FIELDS = ['messages', 'prompt', 'input', 'instructions', 'file', 'system'];
/** Never part of the identity: which models answer is the scope's business. */
const ROUTING_FIELDS = ['model', 'fallbacks'];
/** What the hash leaves out, and what the scope's parameters leave out. */
const NOT_HASHED: ReadonlySet<string> = new Set(ROUTING_FIELDS);
const NOT_PARAMS: ReadonlySet<string> = new Set([...ROUTING_FIELDS, ...INPUT_FIELDS]);
const SYSTEM_ROLES = new Set(['system', 'developer']);

type Body = Record<string, unknown>;

/** The conversation length (chat messages, a responses input list), for conversation_history_threshold. */
export function conversationLength(req: Body): number {
  if (Array.isArray(req.messages)) return req.messages.length;
  if (Array.isArray(req.input) && req.input.some((i) => i && typeof i === 'object' && !Array.isArray(i))) return req.input.length;
  return 0;
}

function withoutSystem(req: Body): Body {
  const out: Body = { ...req };
  if (Array.isArray(req.messages)) out.messages = req.messages.filter((m) => !SYSTEM_ROLES.has((m as { role?: string })?.role ?? ''));
  if (Array.isArray(req.input)) out.input = req.input.filter((m) => !(m && typeof m === 'object' && SYSTEM_ROLES.has((m as { role?: string }).role ?? '')));
  delete out.instructions;
  delete out.system;
  return out;
}

function textOf(v: unknown, out: string[]): void {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) textOf(x, out);
  else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.text === 'string') out.push(o.text);
    if (o.content !== undefined) textOf(o.content, out);
  }
}

/** The words of the input, role-free: what two paraphrased requests have in common. */
export function semanticText(req: Body): string {
  const parts: string[] = [];
  for (const f of ['instructions', 'system', 'messages', 'prompt', 'input']) if (req[f] !== undefined) textOf(req[f], parts);
  return parts.join('\n');
}

/** Provider and model as the request will use them: the planned primary target, else the request's model. */
function providerModel(ctx: RequestContext): { provider: string; model: string } {
  const t = ctx.targets[0];
  if (t) return { provider: t.provider.name, model: t.model };
  const requested = ctx.scope.kind === 'model' ? ctx.scope.model : '';
  const slash = requested.indexOf('/');
  if (slash > 0 && ctx.snapshot.providers.has(requested.slice(0, slash))) return { provider: requested.slice(0, slash), model: requested.slice(slash + 1) };
  return { provider: '', model: requested };
}

/** The wire format the answer goes out in: the route (path) over HTTP, the operation in process. */
function formatOf(ctx: RequestContext): string {
  const url = ctx.http?.req.url;
  if (url === undefined) return `in-process:${ctx.operation}`;
  const q = url.indexOf('?');
  return `${ctx.http?.req.method ?? ''} ${q < 0 ? url : url.slice(0, q)}`;
}

export function identify(ctx: RequestContext, cfg: ResolvedCacheConfig, cacheKey: string): CacheIdentity {
  const raw = (ctx.request ?? {}) as Body;
  const req = cfg.excludeSystemPrompt ? withoutSystem(raw) : raw;
  // The stream flag is part of the identity whether it was sent as false or left out.
  const stream = raw.stream === true;
  const { provider, model } = providerModel(ctx);
  // The scope is the canonical array [key, cache key, model, provider, format, type, params]: its
  // strings as JSON.stringify writes them (the canonical form of an array of strings), its last
  // item written through a view (no copy of the request), in the same walk as the hash's text.
  const head = JSON.stringify([ctx.vk?.record.id ?? '', cacheKey, cfg.cacheByModel ? model : '', cfg.cacheByProvider ? provider : '', formatOf(ctx), ctx.requestType]);
  const [params, whole] = canonicalPair(req, { skip: NOT_PARAMS, stream }, { skip: NOT_HASHED, stream });
  const scope = sha256Hex(`${head.slice(0, -1)},${params}]`);
  const hash = sha256Hex(whole);
  return { cacheKey, scope, hash, text: cfg.semantic ? semanticText(req) : '', provider, model };
}
