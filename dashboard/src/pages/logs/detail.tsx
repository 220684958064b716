// One request's log record: what was asked and answered (when content logging is on), how it was
// routed (the audit trail), retries and fallbacks, cost, cache_debug, metadata and the raw record;
// for an agent request, its turns (child records, each linking to its own detail).
import type { ComponentChildren } from 'preact';
import { get } from '../../lib/api.ts';
import { formatCost, formatMs, formatNumber, formatTime } from '../../lib/format.ts';
import { useAsync } from '../../lib/hooks.ts';
import { ErrorBox, Loading, PageHeader, Table } from '../../ui/components.tsx';
import { listHref, modelOf, StatusBadge } from './cells.tsx';
import type { LogEntry, LogSearch, TrailStep } from '../../../../proxy/src/api/answers.ts';

/** Pretty JSON when the text is JSON, else the text as it is. */
function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const json = (v: unknown): string => (typeof v === 'string' ? pretty(v) : JSON.stringify(v, null, 2));
const present = (v: unknown): boolean => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);

function Section(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

function Kv(props: { rows: ReadonlyArray<[string, ComponentChildren]> }) {
  return (
    <dl class="kv">
      {props.rows
        .filter(([, v]) => v !== undefined && v !== null && v !== '')
        .map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
    </dl>
  );
}

/** One rule evaluation of the routing audit trail, read defensively: a stored record may be older. */
type RoutingStep = Partial<TrailStep>;

const isStep = (v: unknown): v is RoutingStep => typeof v === 'object' && v !== null && 'ruleName' in v && 'matched' in v;

function outcome(s: RoutingStep): string {
  if (s.skipped) return `skipped (${s.skipped})`;
  if (!s.matched) return 'no match';
  const t = s.target ? ` → ${s.target.provider}/${s.target.model}${s.target.keyId ? ` (key ${s.target.keyId})` : ''}` : '';
  return `matched${t}${s.chain ? ', chain continues' : ''}`;
}

/** The routing audit trail: a table of rule evaluations when it has that shape, else its JSON. */
function AuditTrail(props: { logs: unknown }) {
  const l = props.logs;
  if (Array.isArray(l) && l.every(isStep)) {
    return (
      <Table
        caption="Routing rules evaluated, in order"
        rows={l}
        columns={[
          { label: 'Step', numeric: true, render: (s) => String(s.step ?? '') },
          { label: 'Scope', render: (s) => (s.scopeId ? `${s.scope} ${s.scopeId}` : (s.scope ?? '')) },
          { label: 'Rule', render: (s) => s.ruleName ?? s.ruleId ?? '' },
          { label: 'Expression', render: (s) => <code>{s.expression}</code> },
          { label: 'Result', render: (s) => <span class={s.matched ? 'badge badge-ok' : 'muted'}>{outcome(s)}</span> },
        ]}
      />
    );
  }
  if (Array.isArray(l)) {
    return (
      <ol class="audit">
        {l.map((step) => (
          <li>{typeof step === 'string' ? step : <pre>{json(step)}</pre>}</li>
        ))}
      </ol>
    );
  }
  if (typeof l === 'string') return <pre>{l}</pre>;
  return <pre>{json(l)}</pre>;
}

/** Turns listed at most (an agent request runs at most max_agent_depth of them). */
const MAX_TURNS = 100;

/**
 * An agent request's turns: its child records, oldest first. Each was a model call of its own; the
 * request's record above carries their summed tokens and cost and is the one counted.
 */
function Turns(props: { id: string }) {
  const r = useAsync(() => get<LogSearch>(`/api/logs?parent_request_id=${encodeURIComponent(props.id)}&sort_by=timestamp&order=asc&limit=${MAX_TURNS}`), [props.id]);
  const turns = r.data?.logs ?? [];
  if (r.error) return <ErrorBox error={r.error} />;
  if (turns.length === 0) return null;
  return (
    <Section title={`Agent turns (${turns.length})`}>
      <p class="muted">The model calls this request made while the gateway ran its tools. They are counted once, as this request: the tokens and cost above are their sums.</p>
      <Table
        caption="Agent turns, oldest first"
        rows={turns}
        rowKey={(t) => t.id}
        columns={[
          { label: 'Turn', numeric: true, render: (t) => <a href={`#/logs/${encodeURIComponent(t.id)}`}>{String(turns.indexOf(t) + 1)}</a> },
          { label: 'Time', render: (t) => formatTime(t.timestamp) },
          { label: 'Status', render: (t) => <StatusBadge status={t.status} /> },
          { label: 'Model', render: (t) => modelOf(t) },
          { label: 'Tokens', numeric: true, render: (t) => formatNumber(t.token_usage?.total_tokens) },
          { label: 'Cost', numeric: true, render: (t) => (t.cost === undefined || t.cost === null ? 'unknown' : formatCost(t.cost)) },
          { label: 'Latency', numeric: true, render: (t) => formatMs(t.latency) },
        ]}
      />
    </Section>
  );
}

export function LogDetail(props: { id: string }) {
  const r = useAsync(() => get<LogEntry>(`/api/logs/${encodeURIComponent(props.id)}`), [props.id]);
  const e = r.data;
  const title = 'Request detail';
  if (!e) {
    return (
      <>
        <PageHeader title={title}>
          <a href={listHref()}>← Back to logs</a>
        </PageHeader>
        {r.loading ? <Loading /> : <ErrorBox error={r.error} />}
      </>
    );
  }
  const usage = e.token_usage;
  const engines = e.routing_engines_used ?? [];
  const rules = e.routing_rule_ids ?? [];
  return (
    <>
      <PageHeader title={title}>
        <a href={listHref()}>← Back to logs</a>
      </PageHeader>
      <div class="stack log-detail">
        {present(e.error_details) && (
          <Section title="Error">
            <pre>{json(e.error_details)}</pre>
          </Section>
        )}
        <div class="detail-top">
        <Section title="Summary">
          <Kv
            rows={[
              ['Request id', <code>{e.id}</code>],
              ['Time', formatTime(e.timestamp)],
              ['Status', <StatusBadge status={e.status} />],
              ['Type', e.object],
              ['Model', modelOf(e)],
              ['Requested model', e.requested_model !== e.model ? e.requested_model : undefined],
              ['Streamed', e.stream ? 'yes' : 'no'],
              ['Latency', formatMs(e.latency)],
              ['Time to first token', e.ttft !== undefined ? formatMs(e.ttft) : undefined],
              ['Virtual key', e.virtual_key_name ? `${e.virtual_key_name} (${e.virtual_key_id})` : e.virtual_key_id],
              ['Team', e.team_id],
              ['Customer', e.customer_id],
              ['Provider key', e.selected_key_name ? `${e.selected_key_name} (${e.selected_key_id})` : e.selected_key_id],
              ['Request id (x-request-id)', e.request_id],
              ['Parent request', e.parent_request_id ? <a href={`#/logs/${encodeURIComponent(e.parent_request_id)}`}>{e.parent_request_id}</a> : undefined],
              ['Counted', e.parent_request_id ? 'no: a turn of its parent request, which is counted with its tokens and cost' : undefined],
            ]}
          />
        </Section>
        <div class="stack">
        <Section title="Tokens and cost">
          <Kv
            rows={[
              ['Prompt tokens', formatNumber(usage?.prompt_tokens)],
              ['Completion tokens', formatNumber(usage?.completion_tokens)],
              ['Cached prompt tokens', usage?.prompt_tokens_details ? formatNumber(usage.prompt_tokens_details.cached_tokens) : undefined],
              ['Total tokens', formatNumber(usage?.total_tokens)],
              ['Cost', e.cost === undefined || e.cost === null ? 'unknown (no price for this model)' : formatCost(e.cost)],
            ]}
          />
        </Section>
        <Section title="Routing">
          <Kv
            rows={[
              ['Engines used', engines.length ? engines.join(', ') : 'none'],
              ['Routing rules', rules.length ? rules.join(', ') : 'none'],
              ['Rule name', e.routing_rule_name],
              ['Retries', formatNumber(e.number_of_retries ?? 0)],
              ['Fallback', e.fallback_index ? `fallback #${e.fallback_index}` : 'primary target'],
            ]}
          />
        </Section>
        </div>
        </div>
        {!e.parent_request_id && <Turns id={e.id} />}
        <Section title="Routing audit trail">
          {present(e.routing_engine_logs) ? <AuditTrail logs={e.routing_engine_logs} /> : <p class="muted">No routing rule was evaluated for this request.</p>}
        </Section>
        <Section title="Request content">{e.raw_request ? <pre data-testid="request-content">{pretty(e.raw_request)}</pre> : <p class="muted">Not logged (content logging is off, or the request had no content).</p>}</Section>
        <Section title="Response content">{e.raw_response ? <pre data-testid="response-content">{pretty(e.raw_response)}</pre> : <p class="muted">Not logged.</p>}</Section>
        {present(e.cache_debug) && (
          <Section title="Cache">
            <pre>{json(e.cache_debug)}</pre>
          </Section>
        )}
        {present(e.metadata) && (
          <Section title="Metadata">
            <Table caption="Metadata" columns={[{ label: 'Key', key: 'k' }, { label: 'Value', key: 'v' }]} rows={Object.entries(e.metadata ?? {}).map(([k, v]) => ({ k, v }))} />
          </Section>
        )}
        <section class="card" aria-label="Raw record">
          <details>
            <summary>Raw record (JSON)</summary>
            <pre>{JSON.stringify(e, null, 2)}</pre>
          </details>
        </section>
      </div>
    </>
  );
}
