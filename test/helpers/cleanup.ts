// Closes what a test file started, even when a `before` failed half way: a server left open keeps
// the file's process alive, and the run hangs on it. Helpers register what they start here; the
// file's last `after` hook closes whatever is still open.
import { after } from 'node:test';

const open = new Set<() => Promise<void>>();

after(async () => {
  await Promise.allSettled([...open].map((close) => close()));
});

/** Registers `close` to run at the end of the file unless it ran before; returns it, wrapped to unregister. */
export function closeAtEnd(close: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  const once = (): Promise<void> => {
    open.delete(once);
    return (done ??= close());
  };
  open.add(once);
  return once;
}
