// The checksums of the operator <-> proxy contract: lowercase hex SHA-256 of UTF-8 bytes.
import { createHash } from 'node:crypto';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Checksum of the Secret: sha256 of `KEY=<base64>\n` lines, keys sorted ascending, the base64 being
 * exactly `.data[KEY]` as the API server returns it (standard padded base64 of the value's bytes).
 */
export function secretChecksum(data: Readonly<Record<string, string>>): string {
  return sha256Hex(Object.keys(data).sort().map((k) => `${k}=${data[k]}\n`).join(''));
}
