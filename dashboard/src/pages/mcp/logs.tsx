// MCP tool call logs (/api/mcp-logs): every filter the API takes, the totals of the filtered set,
// and per call its arguments, result or error.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { get, query } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { formatCost, formatMs, formatNumber, formatTime } from '../../lib/format.ts';
import { Button, ErrorBox, Field, Loading, Select, TextInput } from '../../ui/components.tsx';
import { DetailRow, EmptyRow } from '../../ui/detail-rows.tsx';
import { Pager } from '../../ui/pager.tsx';
import { isoOf, ORDER_OPTIONS, usePagedFilters } from '../shared/paged-filters.ts';
import type { McpFilterDataView as McpFilterData, McpLog, McpLogSearch as McpLogPage } from '../../../../proxy/src/api/answers.ts';

const PAGE_SIZE = 50;

interface Filters {
  tool: string;
  server: string;
  status: string;
  vk: string;
  request: string;
  search: string;
  start: string;
  end: string;
  min: string;
  max: string;
  sort: string;
  order: string;
}

const EMPTY: Filters = { tool: '', server: '', status: '', vk: '', request: '', search: '', start: '', end: '', min: '', max: '', sort: 'timestamp', order: 'desc' };
const any = (label: string, values: readonly string[]) => [{ value: '', label }, ...values.map((v) => ({ value: v, label: v }))];

function Details(props: { log: McpLog }) {
  const l = props.log;
  return (
    <div class="kv">
      <strong>Arguments</strong>
      <pre class="json mono">{JSON.stringify(l.arguments, null, 2)}</pre>
      {l.result && (
        <>
          <strong>Result</strong>
          <pre class="json mono">{l.result.text}</pre>
        </>
      )}
      {l.error_details && (
        <>
          <strong>Error</strong>
          <pre class="json mono">{l.error_details.error.message}</pre>
        </>
      )}
    </div>
  );
}

export function McpLogs(props: { refresh?: number }) {
  const { filters: f, set, offset, setOffset } = usePagedFilters<Filters>(EMPTY);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const qs = query({
    tool_names: f.tool,
    server_labels: f.server,
    status: f.status,
    virtual_key_ids: f.vk,
    llm_request_ids: f.request.trim(),
    content_search: f.search.trim(),
    start_time: isoOf(f.start),
    end_time: isoOf(f.end),
    min_latency: f.min,
    max_latency: f.max,
    sort_by: f.sort,
    order: f.order,
    limit: PAGE_SIZE,
    offset,
  });
  const page = useAsync(() => get<McpLogPage>(`/api/mcp-logs${qs}`), [qs, tick, props.refresh]);
  const choices = useAsync(() => get<McpFilterData>('/api/mcp-logs/filterdata'), [tick, props.refresh]);
  const c = choices.data;
  const total = page.data?.pagination.total_count ?? 0;
  const s = page.data?.stats;
  return (
    <section class="mcp-logs" aria-label="MCP tool calls">
      <div class="toolbar">
        <Field label="Tool">
          <Select value={f.tool} onChange={(v) => set('tool', v)} options={any('Any tool', c?.tool_names ?? [])} />
        </Field>
        <Field label="Server">
          <Select value={f.server} onChange={(v) => set('server', v)} options={any('Any server', c?.server_labels ?? [])} />
        </Field>
        <Field label="Call status">
          <Select value={f.status} onChange={(v) => set('status', v)} options={any('Any status', ['success', 'error'])} />
        </Field>
        <Field label="Content contains">
          <TextInput type="search" value={f.search} onInput={(v) => set('search', v)} placeholder="arguments, result, error" />
        </Field>
        <Button onClick={() => setTick((n) => n + 1)}>Refresh</Button>
      </div>
      <details class="more-filters">
        <summary>More filters and sorting</summary>
        <div class="toolbar">
          <Field label="Virtual key">
            <Select value={f.vk} onChange={(v) => set('vk', v)} options={any('Any key', (c?.virtual_keys ?? []).map((k) => k.id))} />
          </Field>
          <Field label="Request id">
            <TextInput type="search" value={f.request} onInput={(v) => set('request', v)} />
          </Field>
          <Field label="Calls from">
            <TextInput type="datetime-local" value={f.start} onInput={(v) => set('start', v)} />
          </Field>
          <Field label="Calls to">
            <TextInput type="datetime-local" value={f.end} onInput={(v) => set('end', v)} />
          </Field>
          <Field label="Min latency (ms)">
            <TextInput type="number" value={f.min} onInput={(v) => set('min', v)} />
          </Field>
          <Field label="Max latency (ms)">
            <TextInput type="number" value={f.max} onInput={(v) => set('max', v)} />
          </Field>
          <Field label="Sort by">
            <Select value={f.sort} onChange={(v) => set('sort', v)} options={['timestamp', 'latency', 'cost']} />
          </Field>
          <Field label="Order">
            <Select value={f.order} onChange={(v) => set('order', v)} options={ORDER_OPTIONS} />
          </Field>
        </div>
      </details>
      <ErrorBox error={page.error} />
      {s && (
        <p class="muted" data-testid="mcp-log-stats">
          {formatNumber(s.total_executions)} {s.total_executions === 1 ? 'call' : 'calls'} · {s.success_rate.toFixed(1)}% succeeded · average {formatMs(s.average_latency)} · {formatCost(s.total_cost)} in tool costs
        </p>
      )}
      {page.loading && !page.data ? (
        <Loading />
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="MCP tool calls">
          <table class="table">
            <caption class="sr-only">MCP tool calls</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Server</th>
                <th scope="col">Tool</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Latency
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col">Virtual key</th>
                <th scope="col">Request</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {(page.data?.logs ?? []).length === 0 ? (
                <EmptyRow colSpan={9}>{page.data?.has_logs ? 'No tool call matches these filters.' : 'No MCP tool call yet.'}</EmptyRow>
              ) : (
                page.data!.logs.map((l) => (
                  <Fragment key={l.id}>
                    <tr>
                      <td class="nowrap">{formatTime(l.timestamp)}</td>
                      <td>{l.server_label}</td>
                      <td class="mono">{l.tool_name}</td>
                      <td>
                        <span class={`badge badge-${l.status === 'success' ? 'ok' : 'error'}`}>{l.status}</span>
                      </td>
                      <td class="num">{formatMs(l.latency)}</td>
                      <td class="num">{formatCost(l.cost)}</td>
                      <td>{l.virtual_key_id ?? '—'}</td>
                      <td class="mono">{l.llm_request_id ?? '—'}</td>
                      <td>
                        <button type="button" class="btn btn-default" aria-expanded={open === l.id} aria-label={`Details of the ${l.tool_name} call at ${formatTime(l.timestamp)}`} onClick={() => setOpen(open === l.id ? undefined : l.id)}>
                          {open === l.id ? 'Hide' : 'Show'}
                        </button>
                      </td>
                    </tr>
                    {open === l.id && (
                      <DetailRow colSpan={9}>
                        <Details log={l} />
                      </DetailRow>
                    )}
                  </Fragment>
                ))
              )}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Tool call pages" offset={offset} pageSize={PAGE_SIZE} total={total} onOffset={setOffset} />
    </section>
  );
}
