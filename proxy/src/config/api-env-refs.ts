// `env.VAR` references written through /api. The names come from outside (a caller of /api), and
// the value of the variable ends up in a request the gateway sends: a provider key, an extra header,
// a webhook header. So a write may name only a variable the configuration already references (the
// operator who wrote config.json chose those) or one the deployment allows in SKYBRIDGE_API_ENV_REFS
// (names, or prefixes ending in `*`, separated by commas); any other would copy the gateway's own
// environment (a database password, a cloud token) to a URL of the caller's choosing.
import type { FieldError } from '../schema/validate.ts';
import { isVaultRef, parseVaultRef, resolvesEnvRef } from '../schema/env-ref.ts';

export const API_ENV_REFS_VARIABLE = 'SKYBRIDGE_API_ENV_REFS';

/** Every `env.VAR` the document resolves, with its path. */
export function envReferences(document: unknown): { path: string; name: string }[] {
  const out: { path: string; name: string }[] = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') {
      if (v.startsWith('env.') && resolvesEnvRef(path)) out.push({ path, name: v.slice(4) });
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(document, '');
  return out;
}

/** Every vault path the document's `vault.` references name, with where. */
function vaultPaths(document: unknown): { path: string; vault: string }[] {
  const out: { path: string; vault: string }[] = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') {
      const ref = isVaultRef(v) && resolvesEnvRef(path) ? parseVaultRef(v) : undefined;
      if (ref && 'path' in ref) out.push({ path, vault: ref.path });
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(document, '');
  return out;
}

/**
 * The same rule for `vault.<path>#<field>`: an /api write may name only a secret path the
 * configuration already reads (whose other fields are then readable too, as the policy allows
 * the gateway), never a new one; config.json chooses the paths.
 */
export function unallowedVaultReferences(before: unknown, after: unknown): FieldError[] {
  const known = new Set(vaultPaths(before).map((r) => r.vault));
  return vaultPaths(after)
    .filter((r) => !known.has(r.vault))
    .map((r) => ({ path: r.path, message: `vault path ${r.vault} is not one this configuration already reads: an /api write cannot name a new vault secret (add the reference to config.json)` }));
}

/** The references `after` adds that neither `before` has nor the allow-list permits, as field errors. */
export function unallowedEnvReferences(before: unknown, after: unknown, allowList: string | undefined): FieldError[] {
  const known = new Set(envReferences(before).map((r) => r.name));
  const allowed = (allowList ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const permits = (name: string) => known.has(name) || allowed.some((a) => (a.endsWith('*') ? name.startsWith(a.slice(0, -1)) : name === a));
  return envReferences(after)
    .filter((r) => !permits(r.name))
    .map((r) => ({
      path: r.path,
      message: `env.${r.name} is not a variable this configuration already uses, and ${API_ENV_REFS_VARIABLE} does not allow it: an /api write cannot read the gateway's environment (set the value itself, or have the deployment add the name to ${API_ENV_REFS_VARIABLE})`,
    }));
}
