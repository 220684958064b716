// Runs `fn` over `items` with at most `limit` calls in flight (status writes at 2,000 CRs: one at a
// time is a minute of round trips, all at once floods the API server). The first error stops new
// calls and is thrown once the running ones settle; callers that want to go on catch in `fn`.
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.err;
}
