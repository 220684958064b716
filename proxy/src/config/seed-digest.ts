// The digest of a config.json as parsed: what tells an edited file from a saved-again one. Its own
// module so the reload's reader thread (read-worker.ts) computes it without loading the service.
import { createHash } from 'node:crypto';
import type { GatewayConfig } from '../schema/gateway.ts';

export const seedDigest = (doc: GatewayConfig): string => createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 16);
