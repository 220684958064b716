// Work on a large configuration (10,000 virtual keys: megabytes of JSON) done in steps: a compile
// written as a generator yields between its parts, and runs either at once (start-up, tests) or
// with the event loop free between steps (a reload while requests flow), so no request waits for
// the whole of it. The result is the same either way; only the waiting differs.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Lets the requests waiting on the event loop run before the next step. */
export const yieldToLoop = (): Promise<void> => nextTurn();

/** A generator's result, computed at once. */
export function runNow<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Steps run back to back for this long before the loop gets a turn: generators yield often (a few
 * hundred items), so no turn runs much over it, and small steps do not each cost a turn.
 */
export const TURN_MS = 5;

/** A generator's result, with the event loop free between its steps (every TURN_MS at most). */
export async function runInSteps<T>(steps: Generator<void, T>): Promise<T> {
  let start = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - start < TURN_MS) continue;
    await yieldToLoop();
    start = performance.now();
  }
}
