// The logs table: one server-side page at a time (the store may hold a million rows), filters in
// the hash, and a live tail that adds requests as the gateway finishes them.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, query } from '../../lib/api.ts';
import { formatCost, formatMs, formatNumber, formatTime } from '../../lib/format.ts';
import { useAsync } from '../../lib/hooks.ts';
import { onLiveStatus, subscribe, type LiveStatus } from '../../lib/live.ts';
import { Banner, Button, ErrorBox, Loading, PageHeader, Stat, Table, type Column } from '../../ui/components.tsx';
import { hrefOf, replaceHash } from '../../shell/route.ts';
import { LogFilters } from './filters.tsx';
import { matchesFilters } from './match.ts';
import { modelOf, rememberList, StatusBadge, vkOf } from './cells.tsx';
import { DEFAULT_LIMIT, FILTER_KEYS, PAGE_KEYS } from './types.ts';
import type { FilterData, LogEntry, LogSearch } from '../../../../proxy/src/api/answers.ts';

const RELOAD_DEBOUNCE_MS = 1500;
/** The API's deepest offset (OFFSET scans what it skips); past it, a narrower time range is the way. */
const MAX_OFFSET = 100_000;

function apiQuery(p: URLSearchParams): string {
  const q: Record<string, string> = {};
  for (const k of [...FILTER_KEYS, ...PAGE_KEYS]) {
    const v = p.get(k);
    if (v) q[k] = v;
  }
  return query(q);
}

const openRecord = (e: LogEntry) => {
  location.hash = `#/logs/${encodeURIComponent(e.id)}`;
};

const COLUMNS: Column<LogEntry & { fresh?: boolean }>[] = [
  {
    label: 'Time',
    render: (e) => (
      <a href={`#/logs/${encodeURIComponent(e.id)}`} class="nowrap">
        {formatTime(e.timestamp)}
        <span class="sr-only"> — open request {e.id}</span>
      </a>
    ),
  },
  { label: 'Status', render: (e) => <StatusBadge status={e.status} /> },
  { label: 'Code', numeric: true, render: (e) => <span title={e.error_class ? `${e.error_class} error` : undefined}>{e.status_code ?? '—'}</span> },
  { label: 'Provider', render: (e) => e.provider ?? '—' },
  { label: 'Model', render: (e) => <span class="nowrap">{modelOf(e)}</span> },
  { label: 'Type', key: 'object' },
  { label: 'Virtual key', render: vkOf },
  { label: 'Tokens', numeric: true, render: (e) => formatNumber(e.token_usage?.total_tokens) },
  { label: 'Cost', numeric: true, render: (e) => formatCost(e.cost) },
  { label: 'Latency', numeric: true, render: (e) => formatMs(e.latency) },
  { label: 'TTFT', numeric: true, render: (e) => formatMs(e.ttft) },
  { label: 'Cache', render: (e) => (e.cache_hit ? <span class="badge badge-ok">hit</span> : <span class="muted">—</span>) },
];

/** The export of the current search: its filters and order, every page. */
function exportHref(p: URLSearchParams, format: 'csv' | 'jsonl'): string {
  const q: Record<string, string> = { format };
  for (const k of [...FILTER_KEYS, 'sort_by', 'order']) {
    const v = p.get(k);
    if (v) q[k] = v;
  }
  return `/api/logs/export${query(q)}`;
}

const STATUS_TEXT: Record<LiveStatus, string> = { idle: 'off', connecting: 'connecting…', open: 'connected', closed: 'reconnecting…' };

export function LogList(props: { params: URLSearchParams }) {
  const p = props.params;
  const key = apiQuery(p);
  const result = useAsync(() => get<LogSearch>(`/api/logs${key}`), [key]);
  const filterData = useAsync(() => get<FilterData>('/api/logs/filterdata'), []);
  const [tail, setTail] = useState(false);
  const [live, setLive] = useState<LogEntry[]>([]);
  const [liveStatus, setLiveStatus] = useState<LiveStatus>('idle');
  const reloadTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const activeFilters = FILTER_KEYS.filter((k) => p.get(k)).length;
  // Folded away by default so the list has the screen; open while a filter is set.
  const [filtersOpen, setFiltersOpen] = useState(activeFilters > 0);

  const limit = Number(p.get('limit') ?? DEFAULT_LIMIT) || DEFAULT_LIMIT;
  const offset = Number(p.get('offset') ?? 0) || 0;
  const newestFirst = (p.get('sort_by') ?? 'timestamp') === 'timestamp' && (p.get('order') ?? 'desc') === 'desc' && offset === 0;

  useEffect(() => rememberList(location.hash || '#/logs'), [p.toString()]);
  // A new server answer already holds what the tail had added.
  useEffect(() => setLive([]), [result.data]);

  useEffect(() => {
    if (!tail) return;
    const unStatus = onLiveStatus(setLiveStatus);
    const unsub = subscribe('log', (m) => {
      const e = m.data as LogEntry | undefined;
      if (!e || typeof e.id !== 'string') return;
      if (p.get('content_search')) {
        // Only the server can tell whether the content matches: ask again, at most every 1.5 s.
        if (reloadTimer.current === undefined) {
          reloadTimer.current = setTimeout(() => {
            reloadTimer.current = undefined;
            result.reload();
          }, RELOAD_DEBOUNCE_MS);
        }
        return;
      }
      if (!matchesFilters(e, p)) return;
      setLive((l) => [e, ...l.filter((x) => x.id !== e.id)].slice(0, limit));
    });
    return () => {
      unsub();
      unStatus();
      setLiveStatus('idle');
      if (reloadTimer.current !== undefined) clearTimeout(reloadTimer.current);
      reloadTimer.current = undefined;
    };
  }, [tail, key]);

  const toggleTail = () => {
    if (!tail && !newestFirst) {
      // The tail shows the newest requests: go to the first page, newest first.
      const q = new URLSearchParams(p);
      for (const k of ['offset', 'sort_by', 'order']) q.delete(k);
      replaceHash(hrefOf('logs', [], q));
    }
    setTail(!tail);
  };

  const go = (params: Record<string, string> | URLSearchParams) => replaceHash(hrefOf('logs', [], params));
  const page = (newOffset: number) => {
    const q = new URLSearchParams(p);
    if (newOffset > 0) q.set('offset', String(newOffset));
    else q.delete('offset');
    go(q);
  };

  const data = result.data;
  const liveIds = new Set(live.map((e) => e.id));
  const rows: (LogEntry & { fresh?: boolean })[] = data ? [...live.map((e) => ({ ...e, fresh: true })), ...data.logs.filter((e) => !liveIds.has(e.id))].slice(0, limit) : [];
  const added = data ? live.filter((e) => !data.logs.some((x) => x.id === e.id)).length : 0;
  const total = data ? data.pagination.total_count + added : 0;
  const logsOff = result.error instanceof ApiError && result.error.status === 404;

  return (
    <>
      <PageHeader title="Logs">
        <Button onClick={toggleTail}>
          <span aria-hidden="true">{tail ? '■' : '▶'}</span> {tail ? 'Stop live tail' : 'Live tail'}
        </Button>
        <Button onClick={result.reload}>Refresh</Button>
      </PageHeader>
      {tail && (
        <p class="muted" role="status">
          Live tail: {STATUS_TEXT[liveStatus]}
          {newestFirst ? '' : ' (new requests show on the first page, newest first)'}
        </p>
      )}
      {logsOff ? (
        <Banner kind="info">{(result.error as ApiError).message}</Banner>
      ) : (
        <>
          <div class="log-toolbar">
            <button type="button" class="btn" aria-expanded={filtersOpen} aria-controls="log-filters" onClick={() => setFiltersOpen(!filtersOpen)}>
              {filtersOpen ? 'Hide filters' : 'Filters'}
              {activeFilters > 0 ? ` (${activeFilters} active)` : ''}
            </button>
            <span class="spacer" />
            <a class="btn" href={exportHref(p, 'csv')} download>
              Export CSV
            </a>
            <a class="btn" href={exportHref(p, 'jsonl')} download>
              Export JSON lines
            </a>
          </div>
          <div id="log-filters" hidden={!filtersOpen}>
            <LogFilters params={p} filterData={filterData.data} onApply={go} />
          </div>
          <ErrorBox error={result.error} />
          {data && (
            <div class="stats" aria-label="Totals for these filters">
              <Stat label="Requests" value={formatNumber(data.stats.total_requests)} />
              <Stat label="Success rate" value={`${(data.stats.success_rate ?? 0).toFixed(1)}%`} />
              <Stat label="Tokens" value={formatNumber(data.stats.total_tokens)} />
              <Stat label="Cost" value={formatCost(data.stats.total_cost)} />
              <Stat label="Avg latency" value={formatMs(data.stats.average_latency)} />
            </div>
          )}
          {!data && result.loading && <Loading />}
          {data && (
            <>
              <Table
                caption="Request logs"
                columns={COLUMNS}
                rows={rows}
                cards
                dense
                onRowClick={openRecord}
                rowKey={(e) => e.id}
                rowClass={(e) => (e.fresh ? 'fresh' : undefined)}
                empty={data.has_logs ? 'No request matches these filters.' : 'No requests logged yet.'}
              />
              <div class="pager">
                <span class="muted" role="status">
                  {rows.length === 0 ? 'No results' : `${formatNumber(offset + 1)}–${formatNumber(offset + rows.length)} of ${formatNumber(total)}`}
                  {result.loading ? ' (loading…)' : ''}
                </span>
                <span class="row">
                  <Button disabled={offset === 0} onClick={() => page(Math.max(0, offset - limit))}>
                    Previous page
                  </Button>
                  <Button disabled={offset + limit >= total || offset + limit > MAX_OFFSET} onClick={() => page(offset + limit)}>
                    Next page
                  </Button>
                </span>
              </div>
              {offset + limit > MAX_OFFSET && offset + limit < total && <p class="muted">Older requests: narrow the time range (From / To) to page further back.</p>}
            </>
          )}
        </>
      )}
    </>
  );
}
