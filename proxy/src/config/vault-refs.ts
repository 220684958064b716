// Where a document references the vault. Its own module so the reload's reader thread
// (read-worker.ts) lists them without loading the vault client.
import { isVaultRef, parseVaultRef, resolvesEnvRef, type VaultRef } from '../schema/env-ref.ts';

export type VaultReference = { at: string; ref: VaultRef | { error: string } };

/** Every vault reference of a document (where references are read), with its path. */
export function vaultReferences(document: unknown): VaultReference[] {
  const out: VaultReference[] = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') {
      if (isVaultRef(v) && resolvesEnvRef(path)) out.push({ at: path, ref: parseVaultRef(v) });
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(document, '');
  return out;
}

