// The state replicas share, opened from the start-up configuration: the configuration store and
// its owner (ConfigService), the usage counters and the dashboard's session revocations.
import { join, resolve } from 'node:path';
import { log } from '../log.ts';
import { checkConfig, type LoadedConfig } from '../config/check.ts';
import { compileSnapshot } from '../config/snapshot.ts';
import { SnapshotHolder } from '../config/source.ts';
import { ConfigService, seedDigest, type SeedSource } from '../config/service.ts';
import { FileConfigStore, MemoryConfigStore, type ConfigStore, type StoredConfig } from '../config/store.ts';
import { ConfigStoreUnavailableError, RedisConfigStore } from './config-redis-store.ts';
import { DEFAULT_KEY_PREFIX, openRedis, REDIS_START_WAIT_MS, redisFromEnv, type SharedRedis } from './redis.ts';
import { RedisSessionRevocations, type SessionRevocations } from './session-revocations.ts';
import type { Dependencies } from './dependencies.ts';
import type { CounterStore } from '../governance/counters/store.ts';
import { MemoryCounterStore } from '../governance/counters/memory.ts';
import { RedisCounterStore } from '../governance/counters/redis.ts';
import { storeTimeoutMs } from '../store-guard.ts';

/**
 * The config store and counters: in Redis when `redis` is configured (shared by every replica),
 * else a file in the app dir and process memory. Redis being away never stops the start: the
 * gateway serves the start-up document, governed requests get a 503 naming Redis, /health says
 * `redis: "unavailable"`, and the stored document is seeded or adopted once Redis answers.
 */
export interface SharedState {
  service: ConfigService;
  counters: CounterStore;
  revocations?: SessionRevocations;
  /** The Redis connection the replicas share, and its key prefix, when one is configured. */
  redis?: { conn: SharedRedis; prefix: string };
  /** Closes the counters, the store and their Redis connections. */
  close(): Promise<void>;
}

/** `dependencies`: where the Redis connection's probe is registered (/health, /ready). */
export async function openState(loaded: LoadedConfig, appDir: string | undefined, kube: boolean, seedFrom: SeedSource, dependencies: Dependencies): Promise<SharedState> {
  const redisCfg = loaded.config.redis ?? redisFromEnv();
  let store: ConfigStore;
  let counters: CounterStore;
  let redis: SharedRedis | undefined;
  let revocations: SessionRevocations | undefined;
  let revocationsRedis: SharedRedis | undefined;
  if (redisCfg) {
    const timeoutMs = storeTimeoutMs();
    const redisCounters = new RedisCounterStore(redisCfg, { commandTimeoutMs: timeoutMs });
    counters = redisCounters;
    // Kubernetes replicas keep no document in Redis, only counters.
    redis = kube ? undefined : openRedis(redisCfg, 'config store', timeoutMs);
    const shared = redis;
    // Readiness rests on it: without the counters every governed request is refused (fail closed).
    dependencies.register('redis', {
      state: () => (redisCounters.isReady && (shared?.isReady() ?? true) ? 'ok' : 'unavailable'),
      reason: () => redisCounters.unavailable() ?? shared?.unavailable(),
      readiness: true,
    });
    store = shared ? new RedisConfigStore(shared, redisCfg.key_prefix ?? DEFAULT_KEY_PREFIX) : new MemoryConfigStore();
    // Dashboard logouts, checked by every replica sharing this Redis.
    revocationsRedis = shared ? undefined : openRedis(redisCfg, 'session revocations', timeoutMs);
    revocations = new RedisSessionRevocations(shared ?? revocationsRedis!, redisCfg.key_prefix ?? DEFAULT_KEY_PREFIX);
  } else {
    store = appDir ? new FileConfigStore(join(resolve(appDir), 'config.store.json')) : new MemoryConfigStore();
    counters = new MemoryCounterStore();
  }
  const sharedRedis = redis ?? revocationsRedis;
  const redisShare = sharedRedis && { redis: { conn: sharedRedis, prefix: redisCfg?.key_prefix ?? DEFAULT_KEY_PREFIX } };
  const close = async (): Promise<void> => {
    await Promise.allSettled([counters.close(), store.close().then(() => redis?.close()), revocationsRedis?.close()]);
  };
  if (kube) {
    // Kubernetes holds the document and each replica follows it there: nothing to store here.
    const holder = new SnapshotHolder(compileSnapshot(loaded.config));
    return { service: new ConfigService(holder, new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: loaded.raw }), counters, ...(revocations && { revocations }), ...redisShare, close };
  }
  let stored: StoredConfig | undefined;
  if (!redis || (await redis.firstAttempt(REDIS_START_WAIT_MS))) {
    try {
      stored = await ConfigService.initialDocument(store, loaded.raw, seedFrom.source);
    } catch (err) {
      if (!(err instanceof ConfigStoreUnavailableError)) throw err;
    }
  }
  if (!stored) {
    // Revision 0: whatever Redis holds once it answers is newer, and is adopted (after seeding).
    stored = { seed: seedDigest(loaded.raw), revision: 0, document: loaded.raw, objects: [] };
    log.warn('Redis is unreachable: serving the start-up configuration; /api changes are refused until Redis answers, then the stored configuration is synced', { addr: redisCfg?.addr });
    (store as RedisConfigStore).seedWhenReady(() => ConfigService.initialDocument(store, loaded.raw, seedFrom.source));
  }
  const { config } = checkConfig(stored.document, `stored configuration (${store.kind})`);
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(config)), store, stored, { document: loaded.raw, from: seedFrom });
  return { service, counters, ...(revocations && { revocations }), ...redisShare, close };
}
