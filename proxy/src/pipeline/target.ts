// Turning the request's `model` and `fallbacks` into the ordered list of provider/model targets.
import type { Snapshot } from '../config/snapshot.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { PROVIDER_KINDS } from '../providers/catalog.ts';
import { GatewayError, invalidRequest } from '../unified/errors.ts';

export interface Target {
  provider: ProviderRuntime;
  /** Bare upstream model name. */
  model: string;
  /** Keys a virtual key allows for this target (undefined: the whole pool). */
  keyIds?: ReadonlySet<string>;
  /** A routing rule or fallback pinned this key. */
  pinnedKeyId?: string;
}

/** Well-known model families, for a bare model name when several providers are configured. */
const FAMILIES: [RegExp, string][] = [
  [/^(gpt-|o\d|text-embedding-|chatgpt-|dall-e|whisper|tts-)/, 'openai'],
  [/^claude-/, 'anthropic'],
  [/^(gemini-|gemma-|text-embedding-004|embedding-0)/, 'gemini'],
  [/^grok-/, 'xai'],
  [/^(mistral-|codestral-|pixtral-|ministral-)/, 'mistral'],
  [/^deepseek-/, 'deepseek'],
];

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
      throw new GatewayError(400, `provider '${name}' is not configured on this gateway`, { param, code: 'provider_not_configured' });
    }
    // Not a provider prefix: an organisation-style model name (`meta-llama/...`), resolved as bare.
  }
  return { provider: bareModelProvider(snapshot, model, param), model };
}

function bareModelProvider(snapshot: Snapshot, model: string, param: string): ProviderRuntime {
  if (snapshot.providers.size === 0) {
    throw new GatewayError(400, 'no providers are configured on this gateway', { param, code: 'no_providers' });
  }
  if (snapshot.providers.size === 1) return snapshot.providers.values().next().value as ProviderRuntime;
  for (const [pattern, name] of FAMILIES) {
    const provider = pattern.test(model) ? snapshot.providers.get(name) : undefined;
    if (provider) return provider;
  }
  throw invalidRequest(
    `model '${model}' does not name a provider; use '<provider>/<model>' with one of: ${[...snapshot.providers.keys()].join(', ')}`,
    param,
  );
}

/** Primary target first, then each fallback (`provider/` keeps the incoming model). */
export function resolveTargets(snapshot: Snapshot, model: string, fallbacks: readonly string[] | undefined): Target[] {
  const primary = resolveTarget(snapshot, model);
  const targets = [primary];
  (fallbacks ?? []).forEach((f, i) => {
    const spec = f.endsWith('/') ? `${f}${primary.model}` : f;
    targets.push(resolveTarget(snapshot, spec, `fallbacks[${i}]`));
  });
  return targets;
}
