// What fits in the objects the operator writes. Kubernetes caps a Secret's data at 1 MiB (keys plus
// decoded values) and any object at about 1.5 MiB in etcd; the apply request also carries
// base64 (4/3 larger) and managedFields naming every key. So: secret values are packed by key into
// at most SECRET_SHARDS Secrets of MAX_SECRET_SHARD_BYTES each, and the index stays under
// MAX_INDEX_BYTES. A CR whose share cannot fit is refused (TooLarge), not the whole render.
import { Buffer } from 'node:buffer';
import { SECRET_SHARD_NAMES, SECRET_SHARDS, secretShardName } from '../../../proxy/src/contract.ts';

export { SECRET_SHARD_NAMES, SECRET_SHARDS, secretShardName };
/** Decoded bytes (keys + values) per Secret shard. */
export const MAX_SECRET_SHARD_BYTES = 768 * 1024;
/** UTF-8 bytes of index.json. */
export const MAX_INDEX_BYTES = 900 * 1024;

export interface SizeLimits {
  secretShardBytes: number;
  secretShards: number;
  indexBytes: number;
}

export const DEFAULT_LIMITS: SizeLimits = { secretShardBytes: MAX_SECRET_SHARD_BYTES, secretShards: SECRET_SHARDS, indexBytes: MAX_INDEX_BYTES };

/** What one secret entry costs against a shard's budget: the key and the decoded value. */
export function secretEntryBytes(key: string, base64: string): number {
  return Buffer.byteLength(key, 'utf8') + decodedLength(base64);
}

/**
 * Bytes a base64 value decodes to, without decoding it (thousands of entries are sized on every
 * render): canonical base64, as the operator writes it; anything else is decoded to be sure.
 */
function decodedLength(base64: string): number {
  if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) return Buffer.from(base64, 'base64').length;
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/**
 * Keys (sorted, so the same data always packs the same way) filled greedily into shards of at most
 * `maxBytes`. Undefined when they need more than `maxShards`. Always at least one (maybe empty) shard.
 */
export function packSecrets(data: Readonly<Record<string, string>>, maxBytes: number, maxShards: number): Record<string, string>[] | undefined {
  const shards: Record<string, string>[] = [{}];
  let used = 0;
  for (const key of Object.keys(data).sort()) {
    const size = secretEntryBytes(key, data[key]);
    if (size > maxBytes) return undefined;
    if (used + size > maxBytes) {
      if (shards.length >= maxShards) return undefined;
      shards.push({});
      used = 0;
    }
    shards[shards.length - 1][key] = data[key];
    used += size;
  }
  return shards;
}

/** A readable size: `1.2 MiB`, `850 KiB`, `312 B`. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${Math.ceil(n / 1024)} KiB`;
  return `${n} B`;
}
