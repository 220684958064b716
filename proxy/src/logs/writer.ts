// The entry point of request logging: `enqueue` after the answer, never awaited. Records wait in a
// bounded queue and are written in batches off the request path; when the queue is full (the store
// is slow or down) new records are dropped and counted instead of blocking or growing memory. While
// the store does not answer (it missed a deadline, store-guard.ts) records wait in the queue rather
// than failing a batch at a time: a short stall loses none, a long one drops what overflows.
import { log } from '../log.ts';
import type { LogRecord } from './record.ts';
import type { LogStore } from './store.ts';

export interface LogWriterOptions {
  /** Records waiting at most (default 10 000). */
  maxQueue?: number;
  /** Records per insert (default 500). */
  batchSize?: number;
  /**
   * Longest wait before a partial batch is written (default 1 s). A batch's own cost (its
   * transaction and, on SQLite, the roll-up upserts) outweighed its rows' at 200 ms (a profile of the
   * writer thread at 150 requests/s: 70% of its time per batch, 30% per row), so fewer, larger
   * batches cost the gateway less per request; a record is readable at most this much later.
   */
  flushIntervalMs?: number;
  /** Called with how many records were just lost (queue full or a failed write): a metric hook. */
  onDrop?: (count: number) => void;
  /** Called with each batch once it is stored (the dashboard's live log tail). */
  onWritten?: (records: readonly LogRecord[]) => void;
}

const WARN_EVERY_MS = 10_000;

export class LogWriter {
  private readonly store: LogStore;
  private readonly maxQueue: number;
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly onDrop?: (count: number) => void;
  private readonly onWritten?: (records: readonly LogRecord[]) => void;
  private queue: LogRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private droppedCount = 0;
  private writtenCount = 0;
  private lastWarn = 0;
  private closed = false;

  constructor(store: LogStore, opts: LogWriterOptions = {}) {
    this.store = store;
    this.maxQueue = opts.maxQueue ?? 10_000;
    this.batchSize = opts.batchSize ?? 500;
    this.flushIntervalMs = opts.flushIntervalMs ?? 1000;
    this.onDrop = opts.onDrop;
    this.onWritten = opts.onWritten;
  }

  /** Records lost so far (queue overflow and failed writes). */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Records stored so far. */
  get written(): number {
    return this.writtenCount;
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.queue.length;
  }

  /** Queues one record; false when it was dropped. Never throws, never waits. */
  enqueue(record: LogRecord): boolean {
    if (this.closed || this.queue.length >= this.maxQueue) {
      this.drop(1, this.closed ? 'the writer is closed' : 'the queue is full');
      return false;
    }
    this.queue.push(record);
    if (this.queue.length >= this.batchSize) this.kick(0);
    else this.kick(this.flushIntervalMs);
    return true;
  }

  /** Writes everything queued so far; resolves when it is stored (or dropped on a failed write). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.writing) await this.writing;
      else if (this.queue.length > 0) await this.writeBatch(false);
      else return;
    }
  }

  /** Flushes, then refuses new records. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private kick(delay: number): void {
    if (this.writing) return; // the running write picks the queue up when it ends
    if (this.timer) {
      if (delay > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.writeBatch();
    }, delay);
    // A pending flush must not keep the process alive; close() writes what is left.
    this.timer.unref();
  }

  /** `hold`: while the store does not answer, keep the batch queued (a flush writes, or drops, at once). */
  private writeBatch(hold = true): Promise<void> {
    if (this.writing) return this.writing;
    if (hold && this.store.unavailable?.() !== undefined && this.queue.length > 0) {
      this.kick(this.flushIntervalMs);
      return Promise.resolve();
    }
    const batch = this.queue.splice(0, this.batchSize);
    if (batch.length === 0) return Promise.resolve();
    this.writing = this.store
      .insert(batch)
      .then(
        () => {
          this.writtenCount += batch.length;
          this.notifyWritten(batch);
        },
        (err: unknown) => this.drop(batch.length, `the store refused a batch: ${(err as Error)?.message ?? String(err)}`),
      )
      .finally(() => {
        this.writing = undefined;
        if (this.queue.length >= this.batchSize) this.kick(0);
        else if (this.queue.length > 0) this.kick(this.flushIntervalMs);
      });
    return this.writing;
  }

  private notifyWritten(batch: readonly LogRecord[]): void {
    try {
      this.onWritten?.(batch);
    } catch (err) {
      log.warn('a request-log listener failed', { error: (err as Error)?.message ?? String(err) });
    }
  }

  private drop(count: number, why: string): void {
    this.droppedCount += count;
    try {
      this.onDrop?.(count);
    } catch {
      // a metric hook must not turn a drop into a failed request
    }
    const now = Date.now();
    if (now - this.lastWarn >= WARN_EVERY_MS) {
      this.lastWarn = now;
      log.warn('request logs dropped', { reason: why, dropped_total: this.droppedCount });
    }
  }
}
