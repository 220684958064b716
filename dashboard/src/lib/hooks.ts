// Data loading for pages: one request per dependency change, stale answers dropped.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): Async<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === seq.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => mine === seq.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Runs an action (a write), keeping its error for the form and its busy flag for the button. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>): { run: (...args: A) => Promise<R | undefined>; busy: boolean; error: unknown; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action(...args);
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}
