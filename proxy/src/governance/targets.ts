// Which targets a request goes to, and in what order: the one answer the plan stage acts on and the
// routing rule tester (/api) shows, so the two cannot drift apart. The first source that applies:
//   a matched routing rule: its target, then its fallbacks (or the request's, when it has none);
//     key load balancing still runs unless the rule pinned a key;
//   the caller's virtual key: its provider configs (permissions, weights, key restrictions), the
//     spec's "Virtual key provider configuration";
//   the request itself: the model it names, then its fallbacks.
// A fallback `provider/` keeps the primary's model.
import type { IncomingHttpHeaders } from 'node:http';
import type { Snapshot } from '../config/snapshot.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import type { Target } from '../pipeline/target.ts';
import { PROVIDER_KINDS } from '../providers/catalog.ts';
import { decide, type Capacity, type RoutingContext, type RoutingDecision } from '../routing/decide.ts';
import type { CompiledRules } from '../routing/rules.ts';
import type { ComplexityTier } from '../schema/complexity.ts';
import { GatewayError, invalidRequest } from '../unified/errors.ts';
import { log } from '../log.ts';
import type { ProviderGrant, VirtualKeyRuntime } from '../config/governance-runtime.ts';

/** What of a request decides its targets. */
export interface TargetRequest {
  /** The model as asked: bare, or `provider/model`. */
  model: string;
  fallbacks: readonly string[] | undefined;
  requestType: string;
  /** Read only when there are routing rules to evaluate (lowercased names). */
  headers: () => IncomingHttpHeaders;
  params: () => Record<string, string>;
  complexityTier?: ComplexityTier;
}

/** Does the provider's model catalog list the model? (undefined: no catalog for that provider.) */
export type CatalogLookup = (provider: string, model: string) => boolean | undefined;

export interface TargetSources {
  /** The routing rules evaluated (the snapshot's, or the tester's set with its draft). */
  rules: CompiledRules;
  /** Percent used of the limits for a provider/model, as the rules read it. */
  capacity: (provider: string, model: string) => Capacity;
  catalog: CatalogLookup;
  random?: () => number;
}

export interface TargetChoice {
  /** The routing rules' decision and audit trail (unmatched, with no trail, when there are no rules). */
  decision: RoutingDecision;
  /** Who chooses: a matched rule, the caller's virtual key, or the model the request named. */
  by: 'routing-rule' | 'governance' | 'request';
  /** The ordered targets, primary first; throws the request's 400 / 403 when they cannot be had. */
  targets(): Target[];
}

/** The one answer to "which targets, in what order" (see the top of this file). */
export function chooseTargets(snap: Snapshot, vk: VirtualKeyRuntime | undefined, request: TargetRequest, sources: TargetSources): TargetChoice {
  const random = sources.random ?? Math.random;
  const decision = decide(sources.rules, routingContext(snap, vk, request, sources.rules.size > 0), { capacity: sources.capacity, random });
  if (decision.matched) return { decision, by: 'routing-rule', targets: () => decisionTargets(snap, decision, request.fallbacks) };
  if (vk) return { decision, by: 'governance', targets: () => grantTargets(vk, snap, request.model, request.fallbacks, sources.catalog, random) };
  return { decision, by: 'request', targets: () => namedTargets(snap, request.model, request.fallbacks) };
}

/**
 * The decision in the gateway's log, for a request that ran rules: at debug, as every per-request
 * line but the access line (the request log record keeps the trail at any level).
 */
export function logDecision(requested: string, decision: RoutingDecision, requestId?: string): void {
  // Built only when it is written: with every rule evaluated the trail is long.
  if (decision.trail.length > 0 && log.enabled('debug')) {
    log.debug('routing decision', { request_id: requestId, model: requested, matched: decision.matched, provider: decision.provider, routed_model: decision.model, trail: decision.trail, ...(decision.error && { error: decision.error }) });
  }
}

// ---- Names: `provider/model`, a bare model, a fallback ----

/** Well-known model families, for a bare model name when several providers are configured. */
const FAMILIES: [RegExp, string][] = [
  [/^(gpt-|o\d|text-embedding-|chatgpt-|dall-e|whisper|tts-)/, 'openai'],
  [/^claude-/, 'anthropic'],
  [/^(gemini-|gemma-|text-embedding-004|embedding-0)/, 'gemini'],
  [/^grok-/, 'xai'],
  [/^(mistral-|codestral-|pixtral-|ministral-)/, 'mistral'],
  [/^deepseek-/, 'deepseek'],
];

/** The target a model name stands for; `param` names the field in errors. */
export function resolveTarget(snapshot: Snapshot, model: string, param = 'model'): Target {
  const slash = model.indexOf('/');
  if (slash > 0) {
    const name = model.slice(0, slash);
    const rest = model.slice(slash + 1);
    const provider = snapshot.providers.get(name);
    if (provider) {
      if (!rest) throw invalidRequest(`model name missing after '${name}/'`, param);
      return { provider, model: rest };
    }
    if (PROVIDER_KINDS[name]) {
      throw new GatewayError(400, `provider '${name}' is not configured on this gateway: ${howToConfigure(name)}`, { param, code: 'provider_not_configured' });
    }
    // Not a provider prefix: an organisation-style model name (`meta-llama/...`), resolved as bare.
  }
  return { provider: bareModelProvider(snapshot, model, param), model };
}

/** What would configure a built-in provider: its environment variable, or its config.json entry. */
export function howToConfigure(name: string): string {
  const kind = PROVIDER_KINDS[name];
  if (!kind) return `add it under providers in config.json`;
  if (name === 'vertex') return 'set VERTEX_PROJECT_ID with its credentials, or add providers.vertex to config.json';
  const variable = kind.keyless ? `${name.toUpperCase()}_BASE_URL` : kind.envKey;
  return `set ${variable} (without a config.json), or add providers.${name} to config.json`;
}

const configured = (snapshot: Snapshot): string => [...snapshot.providers.keys()].join(', ');

function bareModelProvider(snapshot: Snapshot, model: string, param: string): ProviderRuntime {
  const slash = model.indexOf('/');
  const family = FAMILIES.find(([pattern]) => pattern.test(model))?.[1];
  if (snapshot.providers.size === 0) {
    const fix = family ? howToConfigure(family) : 'set a provider key such as OPENAI_API_KEY or ANTHROPIC_API_KEY, or add providers to config.json';
    throw new GatewayError(400, `no providers are configured on this gateway: ${fix}`, { param, code: 'no_providers' });
  }
  if (snapshot.providers.size === 1) return snapshot.providers.values().next().value as ProviderRuntime;
  const provider = family ? snapshot.providers.get(family) : undefined;
  if (provider) return provider;
  if (family) {
    throw new GatewayError(400, `model '${model}' is served by provider '${family}', which is not configured on this gateway: ${howToConfigure(family)}`, { param, code: 'provider_not_configured' });
  }
  if (slash > 0) {
    // `acme/model`: neither a configured nor a built-in provider, and no single provider to send it to.
    throw new GatewayError(400, `unknown provider '${model.slice(0, slash)}' in model '${model}'; configured providers: ${configured(snapshot)}`, { param, code: 'unknown_provider' });
  }
  throw invalidRequest(`model '${model}' does not name a provider; use '<provider>/<model>' with one of: ${configured(snapshot)}`, param);
}

/** A request fallback as a model name: `provider/` keeps `model`. */
const fallbackName = (fallback: string, model: string) => (fallback.endsWith('/') ? `${fallback}${model}` : fallback);

/**
 * No rule, no key: the named model, then each fallback. Exported for the plan stage, which takes
 * this answer directly when there are no routing rules and no virtual key (chooseTargets' answer
 * then, without the routing context, decision and closures it would build to reach it).
 */
export function namedTargets(snap: Snapshot, model: string, fallbacks: readonly string[] | undefined): Target[] {
  const primary = resolveTarget(snap, model);
  const targets = [primary];
  if (fallbacks) for (let i = 0; i < fallbacks.length; i++) targets.push(resolveTarget(snap, fallbackName(fallbacks[i], primary.model), `fallbacks[${i}]`));
  return targets;
}

// ---- Routing rules ----

function headerMap(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** What the CEL variables are read from: `provider/model` splits only on a configured provider. */
function routingContext(snap: Snapshot, vk: VirtualKeyRuntime | undefined, request: TargetRequest, withRequest: boolean): RoutingContext {
  const requested = request.model;
  const slash = requested.indexOf('/');
  const named = slash > 0 && snap.providers.has(requested.slice(0, slash));
  return {
    model: named ? requested.slice(slash + 1) : requested,
    provider: named ? requested.slice(0, slash) : '',
    requestType: request.requestType,
    // No rules read them: not built on every request.
    headers: withRequest ? headerMap(request.headers()) : {},
    params: withRequest ? request.params() : {},
    ...(vk && { virtualKey: { id: vk.record.id, name: vk.record.name } }),
    ...(vk?.team && { team: { id: vk.team.id, name: vk.team.name } }),
    ...(vk?.customer && { customer: { id: vk.customer.id, name: vk.customer.name } }),
    ...(request.complexityTier && { complexityTier: request.complexityTier }),
  };
}

/** A matched decision as targets: primary, then the rule's fallbacks or else the request's. */
function decisionTargets(snap: Snapshot, decision: RoutingDecision, requestFallbacks: readonly string[] | undefined): Target[] {
  const targets = [pinned(snap, decision.provider, decision.model, decision.keyId, 'model')];
  if (decision.fallbacks.length === 0) {
    (requestFallbacks ?? []).forEach((f, i) => targets.push(resolveTarget(snap, fallbackName(f, decision.model), `fallbacks[${i}]`)));
    return targets;
  }
  decision.fallbacks.forEach((f, i) => {
    const provider = snap.providers.get(f.provider);
    // A pinned fallback whose key left the pool is skipped; the chain goes on.
    if (f.keyId && !provider?.keys.some((k) => k.id === f.keyId)) {
      log.warn('routing fallback skipped: its pinned key is not in the provider pool', { provider: f.provider, key_id: f.keyId });
      return;
    }
    targets.push(pinned(snap, f.provider, f.model, f.keyId, `fallbacks[${i}]`));
  });
  return targets;
}

function pinned(snap: Snapshot, provider: string, model: string, keyId: string | undefined, param: string): Target {
  const t = resolveTarget(snap, provider ? `${provider}/${model}` : model, param);
  return keyId ? { ...t, pinnedKeyId: keyId } : t;
}

// ---- The virtual key's provider configs ----

const denied = (message: string, code: string, param: string | null = 'model') =>
  new GatewayError(403, message, { type: 'permission_error', code, param });

/** The 403 for a model a `['*']` grant would admit but the provider's catalog does not list: the catalog, not the key, is why. */
function notInCatalog(vk: VirtualKeyRuntime, grants: readonly ProviderGrant[], model: string, catalog: CatalogLookup): GatewayError | undefined {
  const missing = grants.filter((g) => g.models === '*' && catalog(g.provider, model) === false).map((g) => `'${g.provider}'`);
  if (!missing.length) return undefined;
  return denied(
    `model '${model}' is not in the model catalog of provider ${missing.join(', ')} (the models its list-models call returned, or none if that call failed): virtual key '${vk.record.name}' allows every model the provider lists (allowed_models ['*']), and this one is not listed`,
    'model_not_allowed',
  );
}

function admitsModel(grant: ProviderGrant, model: string, catalog: CatalogLookup): boolean {
  if (grant.models === '*') return catalog(grant.provider, model) ?? true;
  return grant.models.has(model);
}

/** The provider's keys this grant may use that also serve the model (key restrictions always apply). */
function usableKeys(grant: ProviderGrant, provider: ProviderRuntime, model: string): ReadonlySet<string> | undefined {
  const ids = new Set<string>();
  for (const k of provider.keys) {
    if (k.weight <= 0 || (k.models !== null && !k.models.has(model))) continue;
    if (grant.keyIds === '*' || grant.keyIds.has(k.id)) ids.add(k.id);
  }
  return ids.size > 0 || (provider.keys.length === 0 && provider.keyless) ? ids : undefined;
}

function grantTarget(grant: ProviderGrant, snapshot: Snapshot, model: string, catalog: CatalogLookup): Target | undefined {
  const provider = snapshot.providers.get(grant.provider);
  if (!provider || !admitsModel(grant, model, catalog)) return undefined;
  const keyIds = usableKeys(grant, provider, model);
  if (!keyIds) return undefined;
  return provider.keys.length === 0 ? { provider, model } : { provider, model, keyIds };
}

const byWeight = (a: ProviderGrant, b: ProviderGrant) => (b.weight ?? -1) - (a.weight ?? -1);

/**
 * The chain a virtual key allows: the primary (named `provider/model`, or for a bare model a
 * weighted pick among the providers that admit it), then the request's own fallbacks or, when it
 * has none, the key's other providers by weight.
 */
function grantTargets(vk: VirtualKeyRuntime, snapshot: Snapshot, requested: string, fallbacks: readonly string[] | undefined, catalog: CatalogLookup, random: () => number): Target[] {
  if (vk.grants.length === 0) {
    throw denied(`virtual key '${vk.record.name}' has no provider configurations, so it allows no provider`, 'no_providers_allowed');
  }
  const slash = requested.indexOf('/');
  const named = slash > 0 ? vk.grants.find((g) => g.provider === requested.slice(0, slash)) : undefined;
  let primary: Target;
  let model: string;
  if (named || (slash > 0 && snapshot.providers.has(requested.slice(0, slash)))) {
    // `provider/model` bypasses weighting but not the key's permissions.
    model = requested.slice(slash + 1);
    const provider = requested.slice(0, slash);
    if (!named) throw denied(`provider '${provider}' is not allowed by virtual key '${vk.record.name}'`, 'provider_not_allowed');
    const t = grantTarget(named, snapshot, model, catalog);
    if (!t) {
      throw notInCatalog(vk, [named], model, catalog) ?? denied(`model '${model}' of provider '${provider}' is not allowed by virtual key '${vk.record.name}'`, 'model_not_allowed');
    }
    primary = t;
  } else {
    model = requested;
    const weighted = vk.grants
      .filter((g) => g.weight !== null && g.weight > 0)
      .map((g) => [g, grantTarget(g, snapshot, model, catalog)] as const)
      .filter((e): e is readonly [ProviderGrant, Target] => e[1] !== undefined);
    if (weighted.length === 0) {
      throw notInCatalog(vk, vk.grants.filter((g) => g.weight !== null && g.weight > 0), model, catalog) ?? denied(`model '${model}' is not allowed by any provider of virtual key '${vk.record.name}'`, 'model_not_allowed');
    }
    primary = pickWeighted(weighted, random);
  }
  const targets = [primary];
  if (fallbacks && fallbacks.length > 0) {
    fallbacks.forEach((f, i) => targets.push(grantedFallback(vk, snapshot, fallbackName(f, model), `fallbacks[${i}]`, catalog)));
    return targets;
  }
  for (const g of [...vk.grants].sort(byWeight)) {
    if (g.provider === primary.provider.name) continue;
    const t = grantTarget(g, snapshot, model, catalog);
    if (t) targets.push(t);
  }
  return targets;
}

/** A fallback the caller named: kept as given, but only where the key allows it. */
function grantedFallback(vk: VirtualKeyRuntime, snapshot: Snapshot, spec: string, param: string, catalog: CatalogLookup): Target {
  const resolved = resolveTarget(snapshot, spec, param);
  const grant = vk.grants.find((g) => g.provider === resolved.provider.name);
  const t = grant && grantTarget(grant, snapshot, resolved.model, catalog);
  if (!t) throw denied(`fallback '${spec}' is not allowed by virtual key '${vk.record.name}'`, 'model_not_allowed', param);
  return t;
}

function pickWeighted(entries: readonly (readonly [ProviderGrant, Target])[], random: () => number): Target {
  let total = 0;
  for (const [g] of entries) total += g.weight ?? 0;
  let r = random() * total;
  for (const [g, t] of entries) {
    r -= g.weight ?? 0;
    if (r < 0) return t;
  }
  return entries[entries.length - 1][1];
}
