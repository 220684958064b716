// Where the config check finds the process's vault values (config/vault.ts sets it once a vault is
// configured). A slot of its own, so the check (which the operator runs too) loads no vault client.
import type { VaultLookup } from '../schema/env-ref.ts';

let current: VaultLookup | undefined;

export const currentVaultLookup = (): VaultLookup | undefined => current;

export function setVaultLookup(lookup: VaultLookup | undefined): void {
  current = lookup;
}
