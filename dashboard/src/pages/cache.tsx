// Plugins & cache: the plugins with enable toggles, the semantic_cache settings, its hit rates
// (refreshed every few seconds) and clearing entries by key or id. Read-only in Kubernetes mode,
// where a CachePolicy resource renders the cache plugin.
import { useEffect } from 'preact/hooks';
import { get } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { Button, ErrorBox, Loading, PageHeader, ReadOnlyBanner } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import { PluginList } from './cache/plugins.tsx';
import { CacheSettings } from './cache/settings.tsx';
import { CacheStatsView } from './cache/stats.tsx';
import { ClearCache } from './cache/clear.tsx';
import { SEMANTIC_CACHE } from './cache/types.ts';
import './routing.css';
import type { CacheStats, PluginView } from '../../../proxy/src/api/answers.ts';

const REFRESH_MS = 5_000;

export function CachePage(props: PageProps) {
  const readOnly = props.info.read_only;
  const plugins = useAsync(() => get<{ plugins: PluginView[] }>('/api/plugins'), []);
  const stats = useAsync(() => get<CacheStats>('/api/cache/stats'), []);
  useEffect(() => {
    const timer = setInterval(stats.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [stats.reload]);
  const cache = plugins.data?.plugins.find((p) => p.name === SEMANTIC_CACHE);
  const storeOpen = stats.data?.store.open === true;

  return (
    <div class="rc">
      <PageHeader title="Plugins & cache">
        <Button onClick={() => (plugins.reload(), stats.reload())}>Refresh</Button>
      </PageHeader>
      {readOnly && <ReadOnlyBanner reason={props.info.read_only_reason} kind="CachePolicy" />}
      <section aria-labelledby="rc-plugins">
        <h2 id="rc-plugins">Plugins</h2>
        <ErrorBox error={plugins.error} />
        {plugins.loading && !plugins.data ? <Loading /> : <PluginList plugins={plugins.data?.plugins ?? []} readOnly={readOnly} onChanged={() => (plugins.reload(), stats.reload())} />}
      </section>
      <section aria-labelledby="rc-hits">
        <h2 id="rc-hits">Hit rates</h2>
        <ErrorBox error={stats.error} />
        {stats.data?.problem && <p class="muted">{stats.data.problem}</p>}
        {stats.data ? <CacheStatsView stats={stats.data} /> : stats.loading && <Loading />}
      </section>
      <section aria-labelledby="rc-settings">
        <h2 id="rc-settings">Cache settings</h2>
        {plugins.data && <CacheSettings plugin={cache} stats={stats.data} statsFailed={stats.error !== undefined} readOnly={readOnly} onSaved={plugins.reload} />}
      </section>
      <section aria-labelledby="rc-clear">
        <h2 id="rc-clear">Clear entries</h2>
        {!storeOpen && stats.data && <p class="muted">No cache store is open on this gateway: there is nothing to clear.</p>}
        <ClearCache disabled={!storeOpen} />
      </section>
    </div>
  );
}
