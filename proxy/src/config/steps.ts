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

/** A generator's result, with the event loop free between its steps. */
export async function runInSteps<T>(steps: Generator<void, T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await yieldToLoop();
  }
}
