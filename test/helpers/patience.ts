// How long a test may wait for something on this machine. Deadlines written for an idle machine
// fail when it is busy (a full suite beside other work: load average 8 on 2 cores made a child
// gateway take over 15 s to start), so every wait in the helpers is scaled by how loaded the
// machine is when the wait begins; polling stays fast, so an idle machine is not slowed down.
import { availableParallelism, loadavg } from 'node:os';

/** Runnable processes per core over the last minute, at least 1 and at most 10. */
export function loadFactor(): number {
  const perCore = loadavg()[0] / availableParallelism();
  return Math.min(10, Math.max(1, perCore));
}

/** `ms` stretched by the machine's load (an idle machine waits `ms`). */
export function patience(ms: number): number {
  return Math.round(ms * loadFactor());
}

/** Polls until `check` passes or the time runs out (`timeoutMs` on an idle machine, longer on a busy one). */
export async function eventually(check: () => Promise<void> | void, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + patience(timeoutMs);
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
