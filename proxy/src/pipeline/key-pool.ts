// Weighted random choice among a provider's keys that may serve the model.
import type { ProviderKey } from '../providers/runtime.ts';
import type { Target } from './target.ts';
import { GatewayError } from '../unified/errors.ts';

export function pickKey(target: Target, avoid?: ReadonlySet<string>): ProviderKey | undefined {
  const { provider, model, keyIds, pinnedKeyId } = target;
  if (provider.keys.length === 0) {
    if (provider.keyless) return undefined;
    throw new GatewayError(500, `provider '${provider.name}' has no keys configured`, { provider: provider.name, code: 'no_keys' });
  }
  if (pinnedKeyId !== undefined) {
    const pinned = provider.keys.find((k) => k.id === pinnedKeyId);
    if (pinned) return pinned;
    throw new GatewayError(400, `pinned key '${pinnedKeyId}' is not in provider '${provider.name}'s key pool`, { provider: provider.name, code: 'pinned_key_missing' });
  }
  // One key (the usual provider): no list made per request when it may serve.
  if (provider.keys.length === 1) {
    const only = provider.keys[0];
    if (only.weight > 0 && (only.models === null || only.models.has(model)) && (!keyIds || keyIds.has(only.id))) return only;
  }
  let eligible = provider.keys.filter((k) => k.weight > 0 && (k.models === null || k.models.has(model)) && (!keyIds || keyIds.has(k.id)));
  if (eligible.length === 0) {
    throw new GatewayError(400, `no key of provider '${provider.name}' may serve model '${model}'`, {
      provider: provider.name,
      param: 'model',
      code: 'no_key_for_model',
    });
  }
  // On a retry, prefer keys that have not just failed, when there are any.
  if (avoid && avoid.size) {
    const fresh = eligible.filter((k) => !avoid.has(k.id));
    if (fresh.length) eligible = fresh;
  }
  if (eligible.length === 1) return eligible[0];
  let total = 0;
  for (const k of eligible) total += k.weight;
  let r = Math.random() * total;
  for (const k of eligible) {
    r -= k.weight;
    if (r < 0) return k;
  }
  return eligible[eligible.length - 1];
}
