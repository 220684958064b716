// Governance provider selection: which providers, models and keys a virtual key admits for a
// request, and the target chain that follows (the spec's "Virtual key provider configuration").
import type { Snapshot } from '../config/snapshot.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { GatewayError } from '../unified/errors.ts';
import type { Target } from '../pipeline/target.ts';
import { resolveTarget } from '../pipeline/target.ts';
import type { ProviderGrant, VirtualKeyRuntime } from './runtime.ts';

/** Does the provider's model catalog list the model? (undefined: no catalog for that provider.) */
export type CatalogLookup = (provider: string, model: string) => boolean | undefined;

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
 * The target chain for a request made with a virtual key: the primary (named `provider/model`, or
 * for a bare model a weighted pick among the providers that admit it), then the request's own
 * fallbacks or, when it has none, the key's other providers by weight.
 */
export function selectTargets(
  vk: VirtualKeyRuntime,
  snapshot: Snapshot,
  requested: string,
  fallbacks: readonly string[] | undefined,
  catalog: CatalogLookup,
  random: () => number = Math.random,
): Target[] {
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
    fallbacks.forEach((f, i) => targets.push(requestFallback(vk, snapshot, f.endsWith('/') ? `${f}${model}` : f, `fallbacks[${i}]`, catalog)));
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
function requestFallback(vk: VirtualKeyRuntime, snapshot: Snapshot, spec: string, param: string, catalog: CatalogLookup): Target {
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
