// Values the gateway stores for webhooks (generated signing secrets, header values written through
// /api) are sealed with AES-256-GCM when the configuration has an `encryption_key`. The key is derived
// from that passphrase with scrypt (once per passphrase); a sealed value reads `enc:v1:<base64>`.
// Without a key values are stored as they are. Changing the key makes sealed values unreadable.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

const PREFIX = 'enc:v1:';
const SALT = 'skybridge webhook values v1';
const keys = new Map<string, Buffer>();

function keyFor(passphrase: string): Buffer {
  let k = keys.get(passphrase);
  if (!k) {
    k = scryptSync(passphrase, SALT, 32);
    keys.set(passphrase, k);
  }
  return k;
}

export const isSealed = (v: string): boolean => v.startsWith(PREFIX);

/** `value` sealed with the passphrase, or unchanged without one. */
export function seal(value: string, passphrase: string | undefined): string {
  if (!passphrase || isSealed(value)) return value;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(passphrase), iv);
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** The plain value; throws when sealed and the passphrase is missing or wrong. */
export function unseal(value: string, passphrase: string | undefined): string {
  if (!isSealed(value)) return value;
  if (!passphrase) throw new Error('the value is encrypted and no encryption_key is configured');
  const raw = Buffer.from(value.slice(PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(passphrase), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('the value cannot be decrypted with the configured encryption_key');
  }
}

/** A new signing secret in the Standard Webhooks format (24 random bytes, as the reference libraries make). */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}
