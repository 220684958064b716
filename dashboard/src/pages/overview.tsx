// Overview: requests, errors (the client's, upstream's, the gateway's), tokens, spend, latency
// percentiles, cache and MCP tool calls over a time range, broken down by provider, model,
// virtual key or team. Updates live: each request the gateway logs (the /ws socket) brings a
// fresh answer, at most every few seconds.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../lib/api.ts';
import { formatCost, formatMs, formatNumber } from '../lib/format.ts';
import { useAsync } from '../lib/hooks.ts';
import { onLiveStatus, subscribe, type LiveStatus } from '../lib/live.ts';
import { Banner, Button, ErrorBox, Field, Loading, PageHeader, Select, Stat, Table, TextInput, type Column } from '../ui/components.tsx';
import { PALETTE, TimeChart, type ChartSeries } from '../ui/time-chart.tsx';
import { hrefOf, replaceHash } from '../shell/route.ts';
import type { PageProps } from './types.ts';
import { LogsOff } from './logs/off.tsx';
import { DEFAULT_DIMENSION, DEFAULT_RANGE, DIMENSIONS, hitRate, loadBreakdown, RANGES, windowOf } from './overview/data.ts';
import type { BreakdownBy, UsageBreakdown, UsageGroup, UsageSeries } from '../../../proxy/src/api/answers.ts';

/** Live updates refetch at most this often (a busy gateway logs many requests a second). */
const LIVE_REFRESH_MS = 3000;

const sumOf = (v: readonly (number | null)[]): number => v.reduce<number>((a, b) => a + (b ?? 0), 0);
const errorsOf = (t: { client_errors: number; upstream_errors: number; gateway_errors: number }): number => t.client_errors + t.upstream_errors + t.gateway_errors;

/** ISO ↔ the datetime-local control's local `YYYY-MM-DDTHH:mm`. */
function toLocal(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
const fromLocal = (v: string): string | undefined => (v && !Number.isNaN(new Date(v).getTime()) ? new Date(v).toISOString() : undefined);

function groupLabel(by: BreakdownBy, g: UsageGroup): string {
  if (g.id === '') return by === 'virtual_key' ? 'No virtual key' : by === 'team' ? 'No team' : 'Unknown';
  return g.name ? `${g.name} (${g.id})` : g.id;
}

/** Where a group's requests are listed (the logs page has no team filter). */
function groupLink(by: BreakdownBy, g: UsageGroup, w: { start_time: string; end_time: string }): string | undefined {
  const param = { provider: 'providers', model: 'models', virtual_key: 'virtual_key_ids', team: undefined }[by];
  if (!param || g.id === '') return undefined;
  return hrefOf('logs', [], { [param]: g.id, start_time: w.start_time, end_time: w.end_time });
}

/** One series per group (the busiest, then the rest as one), of one field. */
function perGroup(d: UsageBreakdown, field: keyof UsageSeries): ChartSeries[] {
  const groups = d.other ? [...d.groups, d.other] : d.groups;
  return groups.map((g, i) => ({ label: g === d.other ? `Other (${g.id})` : groupLabel(d.by, g), color: PALETTE[i % PALETTE.length]!, values: g.series[field] }));
}

function Charts(props: { d: UsageBreakdown; range: string }) {
  const d = props.d;
  const times = d.times.map((t) => Date.parse(t));
  const dim = DIMENSIONS.find((x) => x.value === d.by)!.one;
  const range = props.range.toLowerCase();
  const s = d.series;
  return (
    <div class="chart-grid">
      <TimeChart title={`Requests by ${dim}`} times={times} series={perGroup(d, 'requests')} format={(n) => formatNumber(Math.round(n))} summary={`requests per bucket by ${dim}, ${range}: ${formatNumber(d.totals.requests)} in all`} />
      <TimeChart
        title="Errors: client, upstream, gateway"
        times={times}
        series={[
          { label: 'Client (4xx)', color: PALETTE[3]!, values: s.client_errors },
          { label: 'Upstream', color: PALETTE[1]!, values: s.upstream_errors },
          { label: 'Gateway', color: PALETTE[4]!, values: s.gateway_errors },
        ]}
        format={(n) => formatNumber(Math.round(n))}
        summary={`failed requests per bucket, ${range}: ${formatNumber(d.totals.client_errors)} refused or invalid (the client's), ${formatNumber(d.totals.upstream_errors)} from providers, ${formatNumber(d.totals.gateway_errors)} the gateway's`}
      />
      <TimeChart title={`Tokens by ${dim}`} times={times} series={perGroup(d, 'total_tokens')} format={(n) => formatNumber(Math.round(n))} summary={`tokens per bucket by ${dim}, ${range}: ${formatNumber(d.totals.total_tokens)} in all`} />
      <TimeChart
        title={`Spend by ${dim}`}
        times={times}
        series={perGroup(d, 'cost')}
        format={formatCost}
        axisFormat={(n) => (n === 0 ? '$0' : `$${Number(n.toPrecision(2))}`)}
        summary={`spend in USD per bucket by ${dim}, ${range}: ${formatCost(d.totals.cost)} in all`}
      />
      <TimeChart
        title="Latency p50, p95, p99"
        times={times}
        series={[
          { label: 'p50', color: PALETTE[0]!, values: s.p50_latency },
          { label: 'p95', color: PALETTE[3]!, values: s.p95_latency },
          { label: 'p99', color: PALETTE[1]!, values: s.p99_latency },
        ]}
        format={formatMs}
        summary={`latency percentiles per bucket, ${range}: p50 ${formatMs(d.totals.p50_latency)}, p95 ${formatMs(d.totals.p95_latency)}, p99 ${formatMs(d.totals.p99_latency)} over the range`}
      />
      <TimeChart
        title="Cache hit rate"
        times={times}
        series={[{ label: 'Hit rate', color: PALETTE[2]!, values: hitRate(s.requests, s.cache_hits) }]}
        format={(n) => `${n.toFixed(1)}%`}
        fill
        summary={`share of requests answered from the response cache, ${range}: ${formatNumber(d.totals.cache_hits)} hits saving ${formatCost(d.totals.saved_cost)}`}
      />
      <TimeChart
        title="MCP tool calls"
        times={times}
        series={[
          { label: 'Calls', color: PALETTE[5]!, values: d.mcp.calls },
          { label: 'Failed', color: PALETTE[1]!, values: d.mcp.errors },
        ]}
        format={(n) => formatNumber(Math.round(n))}
        summary={`MCP tool calls per bucket, ${range}: ${formatNumber(sumOf(d.mcp.calls))}, ${formatNumber(sumOf(d.mcp.errors))} failed`}
      />
    </div>
  );
}

function GroupTable(props: { d: UsageBreakdown }) {
  const d = props.d;
  const dim = DIMENSIONS.find((x) => x.value === d.by)!;
  const rows = d.other ? [...d.groups, d.other] : d.groups;
  const columns: Column<UsageGroup>[] = [
    {
      label: dim.label,
      render: (g) => {
        if (g === d.other) return `Other (${g.id})`;
        const href = groupLink(d.by, g, d);
        return href ? <a href={href}>{groupLabel(d.by, g)}</a> : groupLabel(d.by, g);
      },
    },
    { label: 'Requests', numeric: true, render: (g) => formatNumber(g.totals.requests) },
    { label: 'Client errors', numeric: true, render: (g) => formatNumber(g.totals.client_errors) },
    { label: 'Upstream errors', numeric: true, render: (g) => formatNumber(g.totals.upstream_errors) },
    { label: 'Gateway errors', numeric: true, render: (g) => formatNumber(g.totals.gateway_errors) },
    { label: 'Tokens', numeric: true, render: (g) => formatNumber(g.totals.total_tokens) },
    { label: 'Spend', numeric: true, render: (g) => formatCost(g.totals.cost) },
    { label: 'Cache hits', numeric: true, render: (g) => formatNumber(g.totals.cache_hits) },
    { label: 'Saved', numeric: true, render: (g) => formatCost(g.totals.saved_cost) },
    { label: 'p50', numeric: true, render: (g) => formatMs(g.totals.p50_latency) },
    { label: 'p95', numeric: true, render: (g) => formatMs(g.totals.p95_latency) },
    { label: 'p99', numeric: true, render: (g) => formatMs(g.totals.p99_latency) },
  ];
  return (
    <section class="card" aria-label={`By ${dim.one}`}>
      <h2>By {dim.one}</h2>
      <Table caption={`Usage by ${dim.one}`} cards columns={columns} rows={rows} rowKey={(g) => g.id} empty="No requests in this range." />
    </section>
  );
}

function McpTools(props: { d: UsageBreakdown }) {
  if (props.d.mcp.tools.length === 0) return null;
  return (
    <section class="card" aria-label="MCP tools">
      <h2>MCP tools</h2>
      <Table
        caption="MCP tool calls by tool"
        cards
        rows={props.d.mcp.tools}
        rowKey={(t) => t.tool}
        columns={[
          { label: 'Tool', key: 'tool' },
          { label: 'Calls', numeric: true, render: (t) => formatNumber(t.calls) },
          { label: 'Failed', numeric: true, render: (t) => formatNumber(t.errors) },
        ]}
      />
    </section>
  );
}

export function OverviewPage(props: PageProps) {
  return props.info.features.logs ? <OverviewBody params={props.params} /> : <LogsOff title="Overview" />;
}

const LIVE_TEXT: Record<LiveStatus, string> = { idle: 'Live updates off', connecting: 'Connecting live updates…', open: 'Live', closed: 'Live updates reconnecting…' };

function OverviewBody(props: { params: URLSearchParams }) {
  const p = props.params;
  const range = RANGES.some((r) => r.value === p.get('range')) ? p.get('range')! : DEFAULT_RANGE;
  const by = (DIMENSIONS.some((x) => x.value === p.get('by')) ? p.get('by') : DEFAULT_DIMENSION) as BreakdownBy;
  const from = p.get('from');
  const to = p.get('to');
  const rangeLabel = RANGES.find((r) => r.value === range)!.label;
  const [tick, setTick] = useState(0);
  const w = windowOf(range, from, to);
  const problem = 'problem' in w ? w.problem : undefined;
  const r = useAsync(() => ('problem' in w ? Promise.resolve(undefined) : loadBreakdown(by, w)), [range, by, from, to, tick]);
  const d = r.data;
  const logsOff = r.error instanceof ApiError && r.error.status === 404;
  const [liveStatus, setLiveStatus] = useState<LiveStatus>('idle');
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // A custom range that ended in the past does not change: no live updates for it.
  const live = range !== 'custom' || !to;

  useEffect(() => {
    if (!live) return;
    const unStatus = onLiveStatus(setLiveStatus);
    const unsub = subscribe('log', () => {
      if (pending.current !== undefined) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        setTick((t) => t + 1);
      }, LIVE_REFRESH_MS);
    });
    return () => {
      unsub();
      unStatus();
      setLiveStatus('idle');
      if (pending.current !== undefined) clearTimeout(pending.current);
      pending.current = undefined;
    };
  }, [live]);

  const go = (changes: Record<string, string | undefined>) => {
    const next: Record<string, string | undefined> = { range: range === DEFAULT_RANGE ? undefined : range, by: by === DEFAULT_DIMENSION ? undefined : by, from: from ?? undefined, to: to ?? undefined, ...changes };
    if (next.range === DEFAULT_RANGE) next.range = undefined;
    if (next.by === DEFAULT_DIMENSION) next.by = undefined;
    if (next.range !== 'custom') next.from = next.to = undefined;
    replaceHash(hrefOf('overview', [], next));
  };

  return (
    <>
      <PageHeader title="Overview">
        <Field label="Time range">
          <Select value={range} onChange={(v) => go(v === 'custom' ? { range: v, from: from ?? new Date(Date.now() - 3600_000).toISOString() } : { range: v })} options={RANGES.map((x) => ({ value: x.value, label: x.label }))} />
        </Field>
        <Field label="Break down by">
          <Select value={by} onChange={(v) => go({ by: v })} options={DIMENSIONS.map((x) => ({ value: x.value, label: x.label }))} />
        </Field>
        <Button onClick={() => setTick((t) => t + 1)}>Refresh</Button>
      </PageHeader>
      {range === 'custom' && (
        <div class="row custom-range" role="group" aria-label="Custom range">
          <Field label="From">
            <TextInput type="datetime-local" value={toLocal(from)} onInput={(v) => go({ from: fromLocal(v) })} />
          </Field>
          <Field label="To (empty: now)">
            <TextInput type="datetime-local" value={toLocal(to)} onInput={(v) => go({ to: fromLocal(v) })} />
          </Field>
        </div>
      )}
      <p class="muted live-state" role="status">
        {live ? LIVE_TEXT[liveStatus] : 'A past range: no live updates'}
        {r.loading && d ? ' · updating…' : ''}
      </p>
      {problem && <Banner kind="warning">{problem}</Banner>}
      {logsOff ? <Banner kind="info">{(r.error as ApiError).message}</Banner> : <ErrorBox error={r.error} />}
      {!d && r.loading && !problem && <Loading />}
      {d && (
        <>
          <div class="stats" aria-label={`Totals, ${rangeLabel.toLowerCase()}`}>
            <Stat label="Requests" value={formatNumber(d.totals.requests)} />
            <Stat label="Errors" value={formatNumber(errorsOf(d.totals))} hint={`client ${formatNumber(d.totals.client_errors)} · upstream ${formatNumber(d.totals.upstream_errors)} · gateway ${formatNumber(d.totals.gateway_errors)}`} />
            <Stat label="Tokens" value={formatNumber(d.totals.total_tokens)} />
            <Stat label="Spend" value={formatCost(d.totals.cost)} />
            <Stat label="Latency p50 / p95 / p99" value={formatMs(d.totals.p50_latency)} hint={`p95 ${formatMs(d.totals.p95_latency)} · p99 ${formatMs(d.totals.p99_latency)}`} />
            <Stat label="Cache hit rate" value={d.totals.requests ? `${((d.totals.cache_hits / d.totals.requests) * 100).toFixed(1)}%` : '—'} hint={`saved ${formatCost(d.totals.saved_cost)}`} />
            <Stat label="MCP tool calls" value={formatNumber(sumOf(d.mcp.calls))} />
          </div>
          <Charts d={d} range={rangeLabel} />
          <GroupTable d={d} />
          <McpTools d={d} />
        </>
      )}
    </>
  );
}
