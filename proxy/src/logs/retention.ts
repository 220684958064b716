// Deletes request logs older than the retention period, in the background: once shortly after start,
// then every interval. The timer is unref'd so it never keeps a process alive.
import { log } from '../log.ts';
import type { LogStore } from './store.ts';

export const DEFAULT_RETENTION_DAYS = 365;
const DAY_MS = 86_400_000;

export interface RetentionSweeper {
  /** Runs one sweep now; resolves with how many records were deleted. */
  sweep(): Promise<number>;
  stop(): void;
}

export function startRetentionSweeper(
  store: LogStore,
  /** A number, or read at each sweep (client.log_retention_days of the live configuration). */
  retention: number | (() => number),
  opts: { intervalMs?: number; firstDelayMs?: number; now?: () => number } = {},
): RetentionSweeper {
  const interval = opts.intervalMs ?? 3600_000;
  const now = opts.now ?? Date.now;
  let running: Promise<number> | undefined;
  const sweep = (): Promise<number> => {
    const retentionDays = typeof retention === 'number' ? retention : retention();
    // One sweep at a time: a slow one is not stacked on by the next tick.
    running ??= store
      .deleteOlderThan(now() - retentionDays * DAY_MS)
      .then((n) => {
        if (n > 0) log.info('request logs past retention deleted', { deleted: n, retention_days: retentionDays });
        return n;
      })
      .catch((err: unknown) => {
        log.warn('request log retention sweep failed', { error: (err as Error)?.message ?? String(err) });
        return 0;
      })
      .finally(() => (running = undefined));
    return running;
  };
  const first = setTimeout(() => void sweep(), opts.firstDelayMs ?? 10_000);
  const every = setInterval(() => void sweep(), interval);
  first.unref();
  every.unref();
  return {
    sweep,
    stop: () => {
      clearTimeout(first);
      clearInterval(every);
    },
  };
}
