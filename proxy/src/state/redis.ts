// One Redis connection per process for shared state (counters, config store), from the `redis`
// section of config.json.
import { createClient, type RedisClientType } from 'redis';
import type { RedisConfig } from '../config/governance-schema.ts';
import { log } from '../log.ts';

export const DEFAULT_KEY_PREFIX = 'skybridge:';

export async function connectRedis(cfg: RedisConfig): Promise<RedisClientType> {
  const [host, port] = splitAddr(cfg.addr);
  const client = createClient({
    socket: { host, port, ...(cfg.tls && { tls: true as const }), reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) },
    ...(cfg.username && { username: cfg.username }),
    ...(cfg.password && { password: cfg.password }),
    database: cfg.db ?? 0,
  }) as RedisClientType;
  client.on('error', (err: Error) => log.warn('redis connection error', { addr: cfg.addr, error: err.message }));
  await client.connect();
  return client;
}

function splitAddr(addr: string): [string, number] {
  const i = addr.lastIndexOf(':');
  if (i < 0) return [addr, 6379];
  return [addr.slice(0, i).replace(/^\[|\]$/g, ''), Number(addr.slice(i + 1))];
}

/**
 * `redis` from the environment (SKYBRIDGE_REDIS_ADDR, _USERNAME, _PASSWORD, _DB, _TLS, _KEY_PREFIX),
 * as the Helm chart sets it: Kubernetes-rendered configurations carry no `redis` section.
 */
export function redisFromEnv(env: NodeJS.ProcessEnv = process.env): RedisConfig | undefined {
  const addr = env.SKYBRIDGE_REDIS_ADDR;
  if (!addr) return undefined;
  const db = env.SKYBRIDGE_REDIS_DB ? Number(env.SKYBRIDGE_REDIS_DB) : undefined;
  if (db !== undefined && (!Number.isInteger(db) || db < 0)) throw new Error(`SKYBRIDGE_REDIS_DB must be an integer >= 0, got '${env.SKYBRIDGE_REDIS_DB}'`);
  return {
    addr,
    ...(env.SKYBRIDGE_REDIS_USERNAME && { username: env.SKYBRIDGE_REDIS_USERNAME }),
    ...(env.SKYBRIDGE_REDIS_PASSWORD && { password: env.SKYBRIDGE_REDIS_PASSWORD }),
    ...(db !== undefined && { db }),
    ...(env.SKYBRIDGE_REDIS_TLS === 'true' && { tls: true }),
    ...(env.SKYBRIDGE_REDIS_KEY_PREFIX && { key_prefix: env.SKYBRIDGE_REDIS_KEY_PREFIX }),
  };
}
