// Current usage of every budget and rate limit, kept fresh while a page shows it: re-read shortly
// after each completed request (live tail) and every 10 s otherwise.
import { useEffect } from 'preact/hooks';
import { useAsync, type Async } from '../../lib/hooks.ts';
import { subscribe } from '../../lib/live.ts';
import { loadUsage, type UsageIndex } from './model.ts';

const POLL_MS = 10_000;
/** Usage is recorded just after the answer is sent: read a moment later. */
const AFTER_REQUEST_MS = 400;

export function useUsage(): Async<UsageIndex> {
  const usage = useAsync(loadUsage, []);
  useEffect(() => {
    let pending: ReturnType<typeof setTimeout> | undefined;
    const poll = setInterval(() => document.visibilityState === 'visible' && usage.reload(), POLL_MS);
    const off = subscribe('log', () => {
      if (pending === undefined) pending = setTimeout(() => ((pending = undefined), usage.reload()), AFTER_REQUEST_MS);
    });
    return () => {
      clearInterval(poll);
      if (pending !== undefined) clearTimeout(pending);
      off();
    };
  }, []);
  return usage;
}
