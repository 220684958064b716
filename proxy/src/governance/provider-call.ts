// Governance for the routes that spend a provider's keys without naming a model the way /v1 does:
// passthrough, files, batches and the model lists. The same caller check as every inference route
// (a virtual key where the configuration requires one), the key's provider permissions (403), and
// one request admitted against every budget and rate limit that applies (429 / 402; 503 when the
// counters cannot be read).
import type { Exchange } from '../http/exchange.ts';
import type { ProviderRuntime } from '../config/snapshot.ts';
import type { Usage } from '../unified/chat.ts';
import { GatewayError } from '../unified/errors.ts';
import { identifyCaller } from './auth.ts';
import { applicableLimits, type AppliedLimit } from './limits.ts';
import { admitLimits, charger } from './stage.ts';
import type { ModelSet, ProviderGrant, VirtualKeyRuntime } from './runtime.ts';

export interface ProviderCall {
  vk: VirtualKeyRuntime | undefined;
  /** The provider's keys the caller may use (undefined: any). */
  keyIds: ReadonlySet<string> | undefined;
  /** The models the caller may use at this provider ('*': any). */
  models: ModelSet;
  /** Charges an answer's usage (served by `model`, '' when unknown) to the budgets and token limits. */
  charge(model: string, usage: Usage): void;
}

const denied = (message: string, code: string) => new GatewayError(403, message, { type: 'permission_error', code, param: null });

/** The caller's virtual key (401 when one is required and missing), noted for the access log. */
export function callerOf(ex: Exchange): VirtualKeyRuntime | undefined {
  const vk = identifyCaller(ex.snapshot.governance, ex.req.headers);
  if (vk && ex.access) ex.access.vk = vk.record.id;
  return vk;
}

/** The key's grant for `provider`; 403 naming the provider when it has none. */
export function grantFor(vk: VirtualKeyRuntime, provider: string): ProviderGrant {
  const grant = vk.grants.find((g) => g.provider === provider);
  if (!grant) throw denied(`provider '${provider}' is not allowed by virtual key '${vk.record.name}'`, 'provider_not_allowed');
  if (grant.keyIds !== '*' && grant.keyIds.size === 0) {
    throw denied(`virtual key '${vk.record.name}' allows no key of provider '${provider}'`, 'provider_not_allowed');
  }
  return grant;
}

/** Governs one call to `provider` (any model): call before the first upstream byte. */
export async function governProviderCall(ex: Exchange, provider: string, requestType: string): Promise<ProviderCall> {
  if (ex.access) ex.access.provider = provider;
  const vk = callerOf(ex);
  const grant = vk ? grantFor(vk, provider) : undefined;
  const limits = applicableLimits(ex.snapshot.governance, vk, provider, '');
  await admitLimits(limits);
  const charge = charger(ex, vk, limits, provider, '', requestType);
  return {
    vk,
    keyIds: grant && grant.keyIds !== '*' ? grant.keyIds : undefined,
    models: grant?.models ?? '*',
    charge: (model, usage) => charge(provider, model, usage),
  };
}

/**
 * Governs a model list over `providers` for the caller `vk` (from callerOf): only those the caller's key allows are asked, and one
 * request is admitted against the limits of each of them (they are all called).
 */
export async function governProviderList(
  ex: Exchange,
  providers: readonly ProviderRuntime[],
  vk: VirtualKeyRuntime | undefined,
): Promise<{ providers: ProviderRuntime[]; vk: VirtualKeyRuntime | undefined }> {
  const rt = ex.snapshot.governance;
  const allowed = vk ? providers.filter((p) => vk.grants.some((g) => g.provider === p.name)) : [...providers];
  const limits = new Map<string, AppliedLimit>();
  // A key with no provider allowed still passes its own limits: the request was made.
  for (const name of allowed.length ? allowed.map((p) => p.name) : ['']) {
    for (const l of applicableLimits(rt, vk, name, '')) limits.set(l.key, l);
  }
  await admitLimits([...limits.values()]);
  return { providers: allowed, vk };
}
