// Where the live configuration document is kept so that /api writes survive restarts and reach
// every replica: a file in the app dir for one process (or node:cluster workers sharing the dir),
// Redis for many replicas. Each stored revision carries the digest of the config.json it was seeded
// from, so an edited config.json takes over again while an unchanged one does not undo /api writes.
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, watch } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { DocObject, SetAside } from './ownership.ts';
import { prettyJsonChunkSteps } from './pretty-json.ts';
import { runInSteps } from './steps.ts';

export interface StoredConfig {
  /** Digest of the config.json (or environment) the document was seeded from. */
  seed: string;
  /** Increases by one with every write. */
  revision: number;
  /** The served document: the seed's objects, then the store's. */
  document: GatewayConfig;
  /** The objects written through /api (store-managed), set-aside ones included; absent before they were kept apart. */
  objects?: DocObject[];
  /** Store-managed objects not served, and why (a clash with the seed). */
  set_aside?: SetAside[];
}

/** Another process wrote a revision first. */
export class RevisionConflict extends Error {}

export interface ConfigStore {
  readonly kind: 'memory' | 'file' | 'redis';
  /** Where it keeps the document (a file path, a Redis address), for status reports. */
  readonly location?: string;
  load(): Promise<StoredConfig | undefined>;
  /** Compare-and-set: throws RevisionConflict unless the stored revision is `expected` (undefined: write anyway). */
  save(stored: StoredConfig, expected?: number): Promise<void>;
  /** Called when another process wrote a newer revision. */
  subscribe(onChange: () => void): void;
  close(): Promise<void>;
}

export class MemoryConfigStore implements ConfigStore {
  readonly kind = 'memory' as const;
  #stored: StoredConfig | undefined;
  async load(): Promise<StoredConfig | undefined> {
    return this.#stored;
  }
  async save(stored: StoredConfig, expected?: number): Promise<void> {
    if (expected !== undefined && (this.#stored?.revision ?? 0) !== expected) throw new RevisionConflict();
    this.#stored = structuredClone(stored);
  }
  subscribe(): void {}
  async close(): Promise<void> {}
}

/** `<app-dir>/config.store.json`, written atomically (temp file + rename), mode 0600: it may hold keys. */
export class FileConfigStore implements ConfigStore {
  readonly kind = 'file' as const;
  readonly file: string;
  readonly location: string;
  /** The file as this process last wrote it (inode, size, mtime): its own write is no news to it. */
  #written: string | undefined;
  /** Saves started, for their temporary files' names. */
  #saves = 0;
  constructor(file: string) {
    this.file = file;
    this.location = file;
  }
  async load(): Promise<StoredConfig | undefined> {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return undefined;
    }
    return JSON.parse(text) as StoredConfig;
  }
  /** The check and the rename are not one atomic step across processes: fine for workers sharing a dir. */
  async save(stored: StoredConfig, expected?: number): Promise<void> {
    // Megabytes for a large configuration: the text made in steps and written a chunk at a time,
    // with the event loop free between them, before the revision check, so that check and the
    // rename stay as close together as before.
    const chunks = await runInSteps(prettyJsonChunkSteps(stored));
    mkdirSync(dirname(this.file), { recursive: true });
    // Its own temporary file: another save of this process may be writing meanwhile.
    const tmp = `${this.file}.${process.pid}.${++this.#saves}.tmp`;
    try {
      await writeFile(tmp, [...chunks, '\n'], { mode: 0o600 });
      if (expected !== undefined && ((await this.load())?.revision ?? 0) !== expected) throw new RevisionConflict();
      renameSync(tmp, this.file);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    this.#written = fileStamp(this.file);
  }
  subscribe(onChange: () => void): void {
    const base = this.file.slice(this.file.lastIndexOf('/') + 1);
    let timer: NodeJS.Timeout | undefined;
    watch(dirname(this.file), (_e, name) => {
      if (name !== null && name !== base) return;
      clearTimeout(timer);
      // This process's own write would be read back and parsed whole (megabytes for a large
      // configuration) only to find the revision it has: skipped. Another process's write is a new file.
      timer = setTimeout(() => {
        const stamp = fileStamp(this.file);
        if (stamp === undefined || stamp !== this.#written) onChange();
      }, 50);
    }).unref();
  }
  async close(): Promise<void> {}
}

/** What tells one write of a file from another: a rename over it is a new inode. */
function fileStamp(file: string): string | undefined {
  try {
    const st = statSync(file);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}
