// Where the live snapshot comes from. The hot path calls `current()`; sources swap a new snapshot in
// only after it validated and compiled, so a bad edit never replaces a good config.
import { watch, type FSWatcher } from 'node:fs';
import { compileSnapshot, type Snapshot } from './snapshot.ts';
import { loadConfigFile, ConfigError } from './load.ts';
import { log } from '../log.ts';

export type SnapshotListener = (next: Snapshot, previous: Snapshot) => void;

export class SnapshotHolder {
  #current: Snapshot;
  #listeners: SnapshotListener[] = [];

  constructor(initial: Snapshot) {
    this.#current = initial;
  }

  current(): Snapshot {
    return this.#current;
  }

  swap(next: Snapshot): void {
    const previous = this.#current;
    this.#current = next;
    for (const l of this.#listeners) l(next, previous);
  }

  onSwap(listener: SnapshotListener): void {
    this.#listeners.push(listener);
  }
}

/**
 * Watches config.json and swaps in each valid edit. Editors save in several ways (truncate+write,
 * rename over), so the directory is watched and reloads are debounced.
 */
export function watchConfigFile(file: string, holder: SnapshotHolder, onError?: (err: Error) => void): FSWatcher {
  let timer: NodeJS.Timeout | undefined;
  const dir = file.slice(0, file.lastIndexOf('/')) || '.';
  const base = file.slice(file.lastIndexOf('/') + 1);
  const reload = () => {
    try {
      const { config, warnings } = loadConfigFile(file);
      const next = compileSnapshot(config);
      if (next.hash === holder.current().hash) return;
      for (const w of warnings) log.warn(w);
      holder.swap(next);
      log.info('configuration reloaded', { file, config_hash: next.hash });
    } catch (err) {
      const message = err instanceof ConfigError ? err.message : String(err);
      log.error('configuration reload rejected; keeping the last good configuration', { file, error: message });
      onError?.(err as Error);
    }
  };
  const watcher = watch(dir, (_event, name) => {
    if (name !== null && name !== base) return;
    clearTimeout(timer);
    timer = setTimeout(reload, 100);
  });
  watcher.unref();
  return watcher;
}
