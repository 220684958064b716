// The gateway's own credentials must never reach a client, yet providers echo them back in error
// messages ("Incorrect API key provided: sk-..."). Anything relayed from an upstream error goes
// through scrubSecrets first; every secret value of the provider is replaced by a placeholder.
import type { ProviderRuntime } from './runtime.ts';

export const REDACTED = '[REDACTED]';

/** Shorter values would match ordinary words of a message; real keys are far longer. */
const MIN_SECRET_LENGTH = 8;

/** Per compiled provider (a snapshot's providers never change): its secret values, longest first. */
const cache = new WeakMap<ProviderRuntime, readonly string[]>();

export function providerSecrets(provider: ProviderRuntime): readonly string[] {
  let secrets = cache.get(provider);
  if (!secrets) {
    const found = new Set<string>();
    const add = (v: unknown) => {
      if (typeof v === 'string' && v.length >= MIN_SECRET_LENGTH) found.add(v);
    };
    for (const k of provider.keys) {
      add(k.value);
      add(k.bedrock?.access_key);
      add(k.bedrock?.secret_key);
      add(k.bedrock?.session_token);
      const creds = k.vertex?.auth_credentials;
      add(creds);
      add(privateKeyOf(creds));
    }
    for (const v of Object.values(provider.extraHeaders)) if (/^(bearer|basic) /i.test(v)) add(v.slice(v.indexOf(' ') + 1));
    // Longest first: a key that contains another is replaced whole.
    secrets = [...found].sort((a, b) => b.length - a.length);
    cache.set(provider, secrets);
  }
  return secrets;
}

/** The secrets' JSON-escaped forms, per list (providerSecrets keeps one list per provider): scrubbing runs on every answer. */
const escapedLists = new WeakMap<readonly string[], readonly string[]>();

function escapedForms(secrets: readonly string[]): readonly string[] {
  let forms = escapedLists.get(secrets);
  if (!forms) {
    forms = secrets.map((s) => JSON.stringify(s).slice(1, -1));
    escapedLists.set(secrets, forms);
  }
  return forms;
}

/** `text` with every occurrence of each secret (and its JSON-escaped form) replaced by REDACTED. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  const forms = escapedForms(secrets);
  for (let i = 0; i < secrets.length; i++) {
    const s = secrets[i];
    if (out.includes(s)) out = out.split(s).join(REDACTED);
    // A secret with quotes or newlines (a service-account key) appears escaped inside JSON.
    const escaped = forms[i];
    if (escaped !== s && out.includes(escaped)) out = out.split(escaped).join(REDACTED);
  }
  return out;
}

/** scrubSecrets with the provider's own secrets. */
export function scrubProvider(text: string, provider: ProviderRuntime): string {
  const secrets = providerSecrets(provider);
  return secrets.length ? scrubSecrets(text, secrets) : text;
}

function privateKeyOf(json: string | undefined): string | undefined {
  if (!json || !json.trimStart().startsWith('{')) return undefined;
  try {
    const v = (JSON.parse(json) as { private_key?: unknown }).private_key;
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}
