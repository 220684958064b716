// The gateway configurations the bench scripts measure beside the plain one (bench/ab.ts,
// bench/profile.ts), with the servers they need, as the targets of the same names in bench/run.ts.
import { BENCH_VK, governedConfig } from './procs.ts';
import { startPostgres, type RunningPostgres } from '../../test/helpers/postgres.ts';
import { startRedis, type RunningRedis } from '../../test/helpers/redis.ts';

export const CONFIGS = ['plain', 'logging', 'logging-pg', 'governed', 'governed-redis', 'cache-hit'] as const;
export type ConfigName = (typeof CONFIGS)[number];

export interface ConfigServices {
  /** Top-level config for startGateway (none: the plain gateway). */
  config: Record<string, unknown> | undefined;
  headers: Record<string, string>;
  model: string;
  redis?: RunningRedis;
  postgres?: RunningPostgres;
}

export async function servicesFor(config: ConfigName): Promise<ConfigServices> {
  const json = { 'content-type': 'application/json' };
  switch (config) {
    case 'plain':
      return { config: undefined, headers: json, model: 'openai/gpt-4o' };
    case 'logging':
      return { config: { client: { enable_logging: true, disable_content_logging: true } }, headers: json, model: 'openai/gpt-4o' };
    case 'logging-pg': {
      const postgres = await startPostgres();
      return {
        config: {
          client: { enable_logging: true, disable_content_logging: true },
          logs_store: { enabled: true, type: 'postgres', config: { host: postgres.host, port: String(postgres.port), user: postgres.user, password: '', db_name: postgres.database, ssl_mode: 'disable' } },
        },
        headers: json,
        model: 'openai/gpt-4o',
        postgres,
      };
    }
    case 'governed':
      return { config: governedConfig(), headers: { ...json, 'x-bf-vk': BENCH_VK }, model: 'gpt-4o' };
    case 'governed-redis': {
      const redis = await startRedis();
      return { config: { ...governedConfig(), redis: { addr: redis.addr } }, headers: { ...json, 'x-bf-vk': BENCH_VK }, model: 'gpt-4o', redis };
    }
    case 'cache-hit':
      return {
        config: {
          vector_store: { enabled: true, type: 'sqlite', config: { path: 'cache.db' } },
          plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '1h' } }],
        },
        headers: { ...json, 'x-bf-cache-key': 'bench' },
        model: 'openai/gpt-4o',
      };
  }
}

