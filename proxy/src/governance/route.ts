// Routing rules in the request path: build the CEL context from the request, decide, log the audit
// trail, and turn a match into targets (a matched rule skips governance provider selection; key
// load balancing still runs unless the rule pinned a key).
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from '../pipeline/context.ts';
import type { Snapshot } from '../config/snapshot.ts';
import { resolveTarget, type Target } from '../pipeline/target.ts';
import { decide, type RoutingContext, type RoutingDecision } from '../routing/decide.ts';
import { log } from '../log.ts';
import { capacityOf } from './limits.ts';
import type { VirtualKeyRuntime } from './runtime.ts';

function headerMap(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export function routeRequest(
  ctx: RequestContext,
  vk: VirtualKeyRuntime | undefined,
  requested: string,
  requestFallbacks: readonly string[] | undefined,
  requestType: string,
  complexityTier?: RoutingContext['complexityTier'],
): Target[] | undefined {
  const snap = ctx.snapshot;
  const rules = snap.routing;
  if (rules.size === 0) return undefined;
  const routing = routingContext(snap, vk, requested, headerMap(ctx.headers), Object.fromEntries(ctx.query()), requestType, complexityTier);
  const counters = ctx.services.counters;
  const decision = decide(rules, routing, {
    capacity: (provider, model) => capacityOf(snap.governance, vk, provider, model, (key) => counters.cached(key)),
    random: Math.random,
  });
  ctx.routing = decision;
  // Built only when it is written: with every rule evaluated the trail is long.
  if (decision.trail.length > 0 && log.enabled('info')) {
    log.info('routing decision', { model: requested, matched: decision.matched, provider: decision.provider, routed_model: decision.model, trail: decision.trail, ...(decision.error && { error: decision.error }) });
  }
  if (!decision.matched) return undefined;
  return decisionTargets(snap, decision, requestFallbacks);
}

/**
 * What the CEL variables are read from: `provider/model` splits only on a configured provider.
 * Exported for the management API's rule tester, which must see a request exactly as this does.
 */
export function routingContext(
  snap: Snapshot,
  vk: VirtualKeyRuntime | undefined,
  requested: string,
  headers: Record<string, string>,
  params: Record<string, string>,
  requestType: string,
  complexityTier?: RoutingContext['complexityTier'],
): RoutingContext {
  const slash = requested.indexOf('/');
  const named = slash > 0 && snap.providers.has(requested.slice(0, slash));
  return {
    model: named ? requested.slice(slash + 1) : requested,
    provider: named ? requested.slice(0, slash) : '',
    requestType,
    headers,
    params,
    ...(vk && { virtualKey: { id: vk.record.id, name: vk.record.name } }),
    ...(vk?.team && { team: { id: vk.team.id, name: vk.team.name } }),
    ...(vk?.customer && { customer: { id: vk.customer.id, name: vk.customer.name } }),
    ...(complexityTier && { complexityTier }),
  };
}

/** A matched decision as the ordered targets the request tries: primary, then fallbacks. */
export function decisionTargets(snap: Snapshot, decision: RoutingDecision, requestFallbacks: readonly string[] | undefined): Target[] {
  const targets = [target(snap, decision.provider, decision.model, decision.keyId, 'model')];
  // The rule's fallbacks replace the request's; a rule without any keeps the request's own.
  if (decision.fallbacks.length === 0) {
    (requestFallbacks ?? []).forEach((f, i) => targets.push(resolveTarget(snap, f.endsWith('/') ? `${f}${decision.model}` : f, `fallbacks[${i}]`)));
    return targets;
  }
  decision.fallbacks.forEach((f, i) => {
    const provider = snap.providers.get(f.provider);
    // A pinned fallback whose key left the pool is skipped; the chain goes on.
    if (f.keyId && !provider?.keys.some((k) => k.id === f.keyId)) {
      log.warn('routing fallback skipped: its pinned key is not in the provider pool', { provider: f.provider, key_id: f.keyId });
      return;
    }
    targets.push(target(snap, f.provider, f.model, f.keyId, `fallbacks[${i}]`));
  });
  return targets;
}

function target(snap: Snapshot, provider: string, model: string, keyId: string | undefined, param: string): Target {
  const t = resolveTarget(snap, provider ? `${provider}/${model}` : model, param);
  return keyId ? { ...t, pinnedKeyId: keyId } : t;
}
