// The cache settings' vector store line. It comes from the cache statistics, a request of its own
// that may answer after the plugin list (or fail): until then the line says so, rather than
// showing a store that looks absent.
import type { CacheStats } from '../../../../proxy/src/api/answers.ts';

export function storeLine(stats: CacheStats | undefined, statsFailed: boolean): string {
  if (!stats) return statsFailed ? 'unknown (the cache statistics could not be read)' : 'loading…';
  const { store } = stats;
  return `${store.type ?? 'none'}${store.enabled ? '' : ' (disabled)'} — ${store.open ? 'open' : 'not open on this gateway'}`;
}
