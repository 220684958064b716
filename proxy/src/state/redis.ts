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
