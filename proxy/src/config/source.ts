// Where the live snapshot comes from. The hot path calls `current()`; sources swap a new snapshot in
// only after it validated and compiled, so a bad edit never replaces a good config.
import { watch, type FSWatcher } from 'node:fs';
import { loadConfigFile, primeVault } from './load.ts';
import { ConfigError } from './check.ts';
import { seedDigest, type ConfigService } from './service.ts';
import { log } from '../log.ts';
import type { GatewayConfig } from '../schema/gateway.ts';

// The holder lives in holder.ts so service.ts can take one without importing this file (no cycle).
export { SnapshotHolder, type SnapshotListener } from './holder.ts';

/**
 * Watches config.json; each valid edit becomes the new seed, with the objects created through /api
 * laid over it again (ConfigService.reseed). Editors save in several ways (truncate+write, rename
 * over), so the directory is watched and reloads are debounced.
 */
/** What a file reload changed: the documents before and after (references unresolved), for the audit log. */
export interface ReloadEvent {
  file: string;
  before: GatewayConfig;
  after: GatewayConfig;
  hashBefore: string;
  hashAfter: string;
  kept: number;
  setAside: number;
}

export function watchConfigFile(file: string, service: ConfigService, onError?: (err: Error) => void, onReload?: (e: ReloadEvent) => void): FSWatcher {
  let timer: NodeJS.Timeout | undefined;
  const dir = file.slice(0, file.lastIndexOf('/')) || '.';
  const base = file.slice(file.lastIndexOf('/') + 1);
  let last = seedDigest(loadConfigFile(file).raw);
  const reload = async () => {
    try {
      // A newly referenced vault secret is read before the check needs it.
      await primeVault(file);
      const { raw, warnings } = loadConfigFile(file);
      const digest = seedDigest(raw);
      if (digest === last) return;
      for (const w of warnings) log.warn(w);
      const before = service.document();
      const hashBefore = service.current().hash;
      const { kept, setAside } = await service.reseed(raw);
      last = digest;
      onReload?.({ file, before, after: service.document(), hashBefore, hashAfter: service.current().hash, kept, setAside: setAside.length });
      log.info('configuration reloaded', { file, config_hash: service.current().hash, kept_from_api: kept, set_aside: setAside.length });
    } catch (err) {
      const message = err instanceof ConfigError ? err.message : String(err);
      log.error('configuration reload rejected; keeping the last good configuration', { file, error: message });
      onError?.(err as Error);
    }
  };
  const watcher = watch(dir, (_event, name) => {
    if (name !== null && name !== base) return;
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), 100);
  });
  watcher.unref();
  return watcher;
}
