// Request logging from the configuration: the store `logs_store` names, else an embedded SQLite file
// in the app directory (the working directory without --app-dir), its writer and its retention
// sweeper. Logging is on by default so a first request shows in the dashboard; client.enable_logging
// false turns it off. In Kubernetes the store is the deployment's (SKYBRIDGE_LOGS_STORE_*): a pod's
// working directory is no place for a database, so there it stays off unless one is named.
import { isAbsolute, join } from 'node:path';
import type { GatewayConfig } from '../schema/gateway.ts';
import { logsStoreFromEnv } from './env.ts';
import { storeTimeoutMs } from '../store-guard.ts';
import { DEFAULT_RETENTION_DAYS, startRetentionSweeper, type RetentionSweeper } from './retention.ts';
import type { LogStore } from './store.ts';
import type { PostgresLogsConfig } from './postgres-store.ts';
import { LogWriter, type LogWriterOptions } from './writer.ts';

export const DEFAULT_SQLITE_FILE = 'logs.db';

export interface RequestLogs {
  store: LogStore;
  writer: LogWriter;
  sweeper: RetentionSweeper;
  /** Flushes the writer, stops the sweeper, closes the store. */
  close(): Promise<void>;
}

/** The store to open, or undefined when request logging is off. `logs_store` in the config wins over SKYBRIDGE_LOGS_STORE_*. */
export function logsStoreTarget(
  config: GatewayConfig,
  appDir: string,
  env: NodeJS.ProcessEnv = process.env,
  /** False in Kubernetes mode: no embedded default there. */
  embedded = true,
): { type: 'sqlite'; path: string } | { type: 'postgres'; config: NonNullable<GatewayConfig['logs_store']>['config'] } | undefined {
  const ls = config.logs_store ?? (config.client?.enable_logging === false ? undefined : logsStoreFromEnv(env));
  if (ls) {
    if (!ls.enabled) return undefined;
    if (ls.type === 'postgres') return { type: 'postgres', config: ls.config };
    const path = ls.config?.path ?? DEFAULT_SQLITE_FILE;
    return { type: 'sqlite', path: isAbsolute(path) ? path : join(appDir, path) };
  }
  const on = config.client?.enable_logging === true || loggingPluginOn(config) || (embedded && config.client?.enable_logging !== false);
  return on ? { type: 'sqlite', path: join(appDir, DEFAULT_SQLITE_FILE) } : undefined;
}

/** An enabled `logging` entry in plugins[] switches logging on as client.enable_logging does. */
function loggingPluginOn(config: GatewayConfig): boolean {
  const plugins = (config as { plugins?: unknown }).plugins;
  return Array.isArray(plugins) && plugins.some((p) => (p as { name?: unknown })?.name === 'logging' && (p as { enabled?: unknown }).enabled === true);
}

export async function openRequestLogs(
  config: GatewayConfig,
  appDir: string,
  writerOpts: LogWriterOptions = {},
  embedded = true,
  /** The live configuration, so a changed client.log_retention_days applies at the next sweep. */
  current: () => GatewayConfig = () => config,
): Promise<RequestLogs | undefined> {
  const target = logsStoreTarget(config, appDir, process.env, embedded);
  if (!target) return undefined;
  // Each store's code (and SQLite's worker, PostgreSQL's client) loads only when logging uses it.
  const store =
    target.type === 'sqlite'
      ? await (await import('./sqlite-store.ts')).openSqliteStore(target.path)
      : await (await import('./postgres-store.ts')).openPostgresStore(target.config as PostgresLogsConfig, storeTimeoutMs());
  const writer = new LogWriter(store, writerOpts);
  const sweeper = startRetentionSweeper(store, () => current().client?.log_retention_days ?? DEFAULT_RETENTION_DAYS);
  return {
    store,
    writer,
    sweeper,
    close: async () => {
      sweeper.stop();
      await writer.close();
      await store.close();
    },
  };
}
