// The key session tokens and WebSocket tickets are signed with (signed-token.ts), the same on every
// replica because it comes from the configuration they share.
import { scryptSync } from 'node:crypto';
import type { Snapshot } from '../config/snapshot.ts';
import { managementAuth } from './auth.ts';

let cached: { fingerprint: string; key: Buffer } | undefined;

/**
 * The signing key of a configuration: scrypt over the management credentials (admin username and
 * password, API keys) and `encryption_key`, so a stolen token does not let anyone test password
 * guesses quickly (and not at all when an encryption key is set). Computed once per credential
 * change; a change voids every token signed before it.
 */
export function credentialKey(snap: Snapshot): Buffer | undefined {
  const auth = managementAuth(snap.governance.auth);
  const admin = auth.username !== undefined && auth.password !== undefined;
  if (!auth.enabled || (!admin && auth.apiKeys.length === 0)) return undefined;
  const secret = (snap.config as { encryption_key?: string }).encryption_key ?? '';
  const fingerprint = JSON.stringify([auth.username ?? null, auth.password ?? null, [...auth.apiKeys].sort(), secret]);
  if (cached?.fingerprint !== fingerprint) cached = { fingerprint, key: scryptSync(fingerprint, 'skybridge-session-key', 32, { N: 16_384, r: 8, p: 1 }) };
  return cached.key;
}
