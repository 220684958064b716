// One Redis connection per process for the config store, from the `redis` section of config.json
// (or SKYBRIDGE_REDIS_*). Redis is a dependency the gateway can live without for a while: the
// connection is made in the background and retried forever, commands fail at once while it is away
// (no offline queue) and within a bounded time when it hangs (`call`: a deadline per command, and
// at once while it stays silent), and nothing here ever throws at start.
import type { RedisClientType } from 'redis';
import { lazy } from '../lazy.ts';
import { StoreGuard, storeTimeoutMs } from '../store-guard.ts';
import type { RedisConfig } from '../schema/governance.ts';
import { parseAddr } from '../governance/counters/redis.ts';
import { log } from '../log.ts';

const redis = lazy<typeof import('redis')>('redis');

export const DEFAULT_KEY_PREFIX = 'skybridge:';

/** How long a start waits for a first answer from Redis before serving without it. */
export const REDIS_START_WAIT_MS = 3000;

export interface SharedRedis {
  client: RedisClientType;
  /** `host:port` as configured, for messages (never the password). */
  addr: string;
  /** Connected and answering right now. */
  isReady(): boolean;
  /** Why commands fail right now (not connected, or connected and silent), if they do. */
  unavailable(): string | undefined;
  /** A command under the deadline (SKYBRIDGE_STORE_TIMEOUT_MS); fails at once while Redis is silent. */
  call<T>(command: () => Promise<T>): Promise<T>;
  /** Resolves true once connected, false at the first failed attempt or after `timeoutMs`. */
  firstAttempt(timeoutMs: number): Promise<boolean>;
  /** Calls `fn` every time the connection becomes ready (after an outage, too). */
  onReady(fn: () => void): void;
  close(): Promise<void>;
}

export function openRedis(cfg: RedisConfig, name = 'config store', timeoutMs = storeTimeoutMs()): SharedRedis {
  const target = parseAddr(cfg.addr);
  const socket = {
    connectTimeout: 2000,
    reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) + Math.floor(Math.random() * 50),
    ...('url' in target ? {} : { host: target.host, port: target.port, ...(cfg.tls && { tls: true as const, servername: target.host }) }),
  };
  const client = redis().createClient({
    ...('url' in target && { url: target.url }),
    socket,
    ...(cfg.username && { username: cfg.username }),
    ...(cfg.password && { password: cfg.password }),
    database: cfg.db ?? 0,
    // While Redis is away a command fails at once instead of waiting in a queue for its return.
    disableOfflineQueue: true,
    commandOptions: { timeout: timeoutMs },
    // While Redis hangs, replies stop and commands would pile up: past this many, fail at once.
    commandsQueueMaxLength: 10_000,
  }) as RedisClientType;
  // node-redis times out only commands not yet written: one already sent to a Redis that hangs
  // would wait forever. The guard bounds it; its late reply is still read (and dropped).
  const guard = new StoreGuard({ name: `${name} (Redis ${cfg.addr.replace(/\/\/[^@/]*@/, '//')})`, timeoutMs, probe: () => client.ping() });

  let down = false;
  let connected = false;
  let closed = false;
  const attempt: { settle?: (ok: boolean) => void } = {};
  const readyListeners: (() => void)[] = [];
  client.on('error', (err: Error) => {
    // Emitted on every failed reconnect attempt: say it once per outage.
    if (!down && !closed) log.warn(`${name}: ${connected ? 'Redis connection lost' : 'cannot reach Redis'}; retrying in the background`, { addr: cfg.addr, error: err.message });
    down = true;
    attempt.settle?.(false);
  });
  client.on('ready', () => {
    if (down) log.info(`${name}: Redis connection ${connected ? 'restored' : 'established'}`, { addr: cfg.addr });
    down = false;
    connected = true;
    attempt.settle?.(true);
    for (const fn of readyListeners) fn();
  });
  // Settles only once connected, or when closed: its outcome is reported by the events above.
  const connecting = client.connect().then(
    () => undefined,
    () => undefined,
  );

  return {
    client,
    addr: cfg.addr,
    isReady: () => client.isReady && guard.answering,
    unavailable: () => (client.isReady ? guard.stalled() : `${guard.name} is not connected`),
    call: (command) => guard.run(command),
    firstAttempt: (timeoutMs) =>
      client.isReady
        ? Promise.resolve(true)
        : new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => settle(false), timeoutMs);
            const settle = (ok: boolean) => {
              clearTimeout(timer);
              attempt.settle = undefined;
              resolve(ok);
            };
            attempt.settle = settle;
          }),
    onReady: (fn) => readyListeners.push(fn),
    close: async () => {
      if (closed) return;
      closed = true;
      if (client.isReady) await guard.close(() => client.close(), () => client.destroy());
      else {
        void guard.close();
        client.destroy();
      }
      await connecting;
    },
  };
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
