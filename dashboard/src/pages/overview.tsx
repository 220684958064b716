// Overview: requests, errors, tokens, cost and latency over a chosen time range, and the busiest
// models, providers and virtual keys, from the logs store's aggregates.
import { ApiError } from '../lib/api.ts';
import { formatCost, formatMs, formatNumber } from '../lib/format.ts';
import { useAsync } from '../lib/hooks.ts';
import { Banner, Button, ErrorBox, Field, Loading, PageHeader, Select, Stat, Table } from '../ui/components.tsx';
import { hrefOf, replaceHash } from '../shell/route.ts';
import type { PageProps } from './types.ts';
import { TimeChart } from './overview/chart.tsx';
import { LogsOff } from './logs/off.tsx';
import { DEFAULT_RANGE, loadOverview, RANGES, type Overview, type Top } from './overview/data.ts';

const sum = (v: readonly number[]): number => v.reduce((a, b) => a + b, 0);

function peak(times: readonly string[], values: readonly number[], f: (n: number) => string): string {
  let at = -1;
  values.forEach((v, i) => (!Number.isNaN(v) && (at < 0 || v > values[at]!) ? (at = i) : undefined));
  if (at < 0 || values[at] === 0) return 'nothing recorded';
  const d = new Date(times[at]!);
  return `peak ${f(values[at]!)} at ${d.toLocaleString('en-US', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })}`;
}

function bucketWord(seconds: number): string {
  if (seconds % 86400 === 0) return seconds === 86400 ? 'day' : `${seconds / 86400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? 'hour' : `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? 'minute' : `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

function TopTable(props: { title: string; rows: readonly Top[]; link: (t: Top) => string; note?: string }) {
  const max = Math.max(1, ...props.rows.map((r) => r.requests));
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      <Table
        caption={props.title}
        rows={props.rows}
        rowKey={(r) => r.name}
        empty="No requests in this range."
        columns={[
          { label: 'Name', render: (r) => <a href={props.link(r)}>{r.name}</a> },
          { label: 'Requests', numeric: true, render: (r) => formatNumber(r.requests) },
          { label: 'Cost', numeric: true, render: (r) => formatCost(r.cost) },
          {
            label: 'Share',
            render: (r) => (
              <span class="share" aria-label={`${Math.round((r.requests / max) * 100)}% of the busiest`}>
                <span class="share-fill" style={{ width: `${(r.requests / max) * 100}%` }} />
              </span>
            ),
          },
        ]}
      />
      {props.note && <p class="muted">{props.note}</p>}
    </section>
  );
}

function Charts(props: { d: Overview; rangeLabel: string }) {
  const d = props.d;
  const per = bucketWord(d.bucketSeconds);
  const range = props.rangeLabel.toLowerCase();
  return (
    <div class="chart-grid">
      <TimeChart
        title="Requests"
        kind="bar"
        times={d.times}
        series={[
          { label: 'Success', color: 'var(--accent)', values: d.success },
          { label: 'Error', color: 'var(--danger)', values: d.errors },
        ]}
        format={(n) => formatNumber(Math.round(n))}
        summary={`requests per ${per}, ${range}: ${formatNumber(sum(d.success))} succeeded and ${formatNumber(sum(d.errors))} failed; ${peak(d.times, d.success.map((s, i) => s + d.errors[i]!), formatNumber)}`}
      />
      <TimeChart
        title="Tokens"
        kind="bar"
        times={d.times}
        series={[{ label: 'Tokens', color: 'var(--accent)', values: d.tokens }]}
        format={(n) => formatNumber(Math.round(n))}
        summary={`tokens per ${per}, ${range}: ${formatNumber(sum(d.tokens))} in total; ${peak(d.times, d.tokens, formatNumber)}`}
      />
      <TimeChart
        title="Cost"
        kind="line"
        times={d.times}
        series={[{ label: 'Cost', color: 'var(--ok)', values: d.cost }]}
        format={formatCost}
        axisFormat={(n) => (n === 0 ? '$0' : `$${Number(n.toPrecision(2))}`)}
        summary={`cost per ${per}, ${range}: ${formatCost(sum(d.cost))} in total; ${peak(d.times, d.cost, formatCost)}`}
      />
      <TimeChart
        title="Latency"
        kind="line"
        times={d.times}
        series={[
          { label: 'Average', color: 'var(--accent)', values: d.avgLatency },
          { label: 'p95', color: 'var(--warn)', values: d.p95Latency },
        ]}
        format={formatMs}
        summary={`average and 95th percentile latency per ${per}, ${range}; ${peak(d.times, d.p95Latency, formatMs)} (p95)`}
      />
    </div>
  );
}

export function OverviewPage(props: PageProps) {
  return props.info.features.logs ? <OverviewBody params={props.params} /> : <LogsOff title="Overview" />;
}

function OverviewBody(props: { params: URLSearchParams }) {
  const range = RANGES.some((r) => r.value === props.params.get('range')) ? props.params.get('range')! : DEFAULT_RANGE;
  const rangeLabel = RANGES.find((r) => r.value === range)!.label;
  const r = useAsync(() => loadOverview(range), [range]);
  const d = r.data;
  const logsOff = r.error instanceof ApiError && r.error.status === 404;
  return (
    <>
      <PageHeader title="Overview">
        <Field label="Time range">
          <Select value={range} onChange={(v) => replaceHash(hrefOf('overview', [], { range: v === DEFAULT_RANGE ? undefined : v }))} options={RANGES.map((x) => ({ value: x.value, label: x.label }))} />
        </Field>
        <Button onClick={r.reload}>Refresh</Button>
      </PageHeader>
      {logsOff ? (
        <Banner kind="info">{(r.error as ApiError).message}</Banner>
      ) : (
        <ErrorBox error={r.error} />
      )}
      {!d && r.loading && <Loading />}
      {d && (
        <>
          <div class="stats" aria-label={`Totals, ${rangeLabel.toLowerCase()}`}>
            <Stat label="Requests" value={formatNumber(d.stats.total_requests)} />
            <Stat label="Errors" value={formatNumber(sum(d.errors))} hint={d.stats.total_requests > 0 ? `${(100 - (d.stats.success_rate ?? 100)).toFixed(1)}% of finished` : undefined} />
            <Stat label="Tokens" value={formatNumber(d.stats.total_tokens)} />
            <Stat label="Cost" value={formatCost(d.stats.total_cost)} />
            <Stat label="Avg latency" value={formatMs(d.stats.average_latency)} />
          </div>
          <Charts d={d} rangeLabel={rangeLabel} />
          <div class="grid top-grid">
            <TopTable title="Top models" rows={d.topModels} link={(t) => hrefOf('logs', [], { models: t.name === 'unknown' ? undefined : t.name })} />
            <TopTable title="Top providers" rows={d.topProviders} link={(t) => hrefOf('logs', [], { providers: t.name === 'unknown' ? undefined : t.name })} />
            <TopTable
              title="Top virtual keys"
              rows={d.topKeys}
              link={(t) => hrefOf('logs', [], { virtual_key_ids: /\(([^)]+)\)$/.exec(t.name)?.[1] ?? t.name })}
              note={d.keysLeftOut > 0 ? `Counted over the first ${25} virtual keys seen in the logs; ${d.keysLeftOut} more are not counted here.` : undefined}
            />
          </div>
        </>
      )}
    </>
  );
}
