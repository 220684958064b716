// Where the live snapshot comes from. The hot path calls `current()`; sources swap a new snapshot in
// only after it validated and compiled, so a bad edit never replaces a good config.
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { loadConfigFile, readConfigForReload } from './load.ts';
import { checkConfigSteps, checkVettedSteps, ConfigError } from './check.ts';
import { seedDigest, type ConfigService } from './service.ts';
import { runInSteps, yieldToLoop } from './steps.ts';
import { log } from '../log.ts';
import type { GatewayConfig } from '../schema/gateway.ts';

// The holder lives in holder.ts so service.ts can take one without importing this file (no cycle).
export { SnapshotHolder, type SnapshotListener } from './holder.ts';

/**
 * Watches config.json; each valid edit becomes the new seed, with the objects created through /api
 * laid over it again (ConfigService.reseed). Editors save in several ways (truncate+write, rename
 * over), so the directory is watched and reloads are debounced.
 */
/** What a file reload changed: the documents before and after (references unresolved, read-only), for the audit log. */
export interface ReloadEvent {
  file: string;
  before: Readonly<GatewayConfig>;
  after: Readonly<GatewayConfig>;
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
  // A reload of a large file (10,000 virtual keys: megabytes of JSON) is read off the loop and done
  // in steps that yield to it between them (here and in reseed), so requests flowing meanwhile wait
  // for one step at most, never the whole reload; the new snapshot is swapped in whole at the end.
  // The file as it was when last refused (mtime and size): one save can raise several change
  // events, and the same broken file is refused (logged, counted in the reload-error metric) once.
  let refused: string | undefined;
  const reload = async () => {
    const seen = await stat(file).then((s) => `${s.mtimeMs}:${s.size}`, () => undefined);
    if (seen !== undefined && seen === refused) return;
    try {
      // Read, parsed, schema-checked and digested in a thread of its own; here only the text's parse.
      const { raw, digest, problems } = await readConfigForReload(file);
      // An edit that changes nothing (a save without changes, a touch) stops here.
      if (digest === last) return;
      await yieldToLoop();
      const seed = await runInSteps(problems ? checkVettedSteps(raw, problems, file) : checkConfigSteps(raw, file));
      for (const w of seed.warnings) log.warn(w);
      // The documents for the audit entry are the stored ones as they are (never changed in place), not copies.
      const before = onReload && service.storedDocument();
      const hashBefore = service.current().hash;
      const { kept, setAside } = await service.reseed(seed, digest);
      last = digest;
      if (onReload) {
        await yieldToLoop();
        onReload({ file, before: before!, after: service.storedDocument(), hashBefore, hashAfter: service.current().hash, kept, setAside: setAside.length });
      }
      log.info('configuration reloaded', { file, config_hash: service.current().hash, kept_from_api: kept, set_aside: setAside.length });
    } catch (err) {
      refused = seen;
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
