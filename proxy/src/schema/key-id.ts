import { createHash } from 'node:crypto';

/** A provider key's stable id (UUID-shaped, from provider and key name) so every replica agrees. */
export function keyId(provider: string, keyName: string): string {
  const h = createHash('sha256').update(`${provider}\u0000${keyName}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
