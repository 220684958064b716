// Delivery history: one row per delivery (its id is the webhook-id the receiver sees), each with its
// HTTP attempts (status, duration, error), the next retry while pending, and redelivery. Filters are
// the ones /api/webhooks/deliveries supports. Redelivery changes no configuration, so it stays
// available in read-only (Kubernetes) mode. While a delivery is pending the list refreshes itself,
// and a webhook_failure notification refreshes it at once.
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, post, query } from '../../lib/api.ts';
import { useAction, useAsync } from '../../lib/hooks.ts';
import { subscribe } from '../../lib/live.ts';
import { formatMs, formatTime } from '../../lib/format.ts';
import { Banner, Button, ErrorBox, Field, Loading, Select, TextInput } from '../../ui/components.tsx';
import { DetailRow, EmptyRow } from '../../ui/detail-rows.tsx';
import { Pager } from '../../ui/pager.tsx';
import { isoOf, usePagedFilters } from '../shared/paged-filters.ts';
import { DELIVERY_STATES, STATUS_CLASSES, WEBHOOK_EVENTS } from './types.ts';
import type { Delivery, DeliveryPage } from '../../../../proxy/src/api/answers.ts';

const PAGE_SIZE = 25;
const POLL_MS = 2_000;

interface Filters {
  webhook: string;
  outcome: string;
  event: string;
  status_class: string;
  start: string;
  end: string;
  lookup: string;
}

const EMPTY: Filters = { webhook: '', outcome: '', event: '', status_class: '', start: '', end: '', lookup: '' };

function queryOf(f: Filters, offset: number): string {
  const lookup = f.lookup.trim();
  return query({
    webhook: f.webhook || undefined,
    outcome: f.outcome,
    event: f.event,
    status_class: f.status_class,
    start_time: isoOf(f.start),
    end_time: isoOf(f.end),
    // Delivery ids start with msg_ (the webhook-id header); anything else is a request (job) id.
    ...(lookup && (lookup.startsWith('msg_') ? { delivery_id: lookup } : { request_id: lookup })),
    limit: PAGE_SIZE,
    offset,
  });
}

function stateLabel(d: Delivery): string {
  if (d.state === 'pending') return d.attempt_count > 0 ? 'retrying' : 'pending';
  return d.state;
}

function Attempts(props: { delivery: Delivery }) {
  const d = props.delivery;
  if (d.attempts.length === 0) return <p class="muted">No attempt yet{d.next_attempt_at ? `; first attempt at ${formatTime(d.next_attempt_at)}` : ''}.</p>;
  return (
    <table class="table attempts">
      <caption>Attempts of delivery {d.id}</caption>
      <thead>
        <tr>
          <th scope="col">Send</th>
          <th scope="col">Attempt</th>
          <th scope="col">Started</th>
          <th scope="col" class="num">
            Status
          </th>
          <th scope="col" class="num">
            Duration
          </th>
          <th scope="col">Outcome</th>
          <th scope="col">Error / response</th>
        </tr>
      </thead>
      <tbody>
        {d.attempts.map((a) => (
          <tr key={`${a.send}-${a.attempt}`}>
            <td>{a.send}</td>
            <td>{a.attempt}</td>
            <td class="nowrap">{formatTime(a.started_at)}</td>
            <td class="num">{a.status_code ?? '—'}</td>
            <td class="num">{formatMs(a.duration_ms)}</td>
            <td>
              <span class={`badge badge-${a.outcome === 'success' ? 'ok' : 'error'}`}>{a.outcome}</span>
            </td>
            <td class="wrap">{a.error ?? a.response_body ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function DeliveryHistory(props: { webhook?: string; webhooks?: readonly string[]; refresh?: number }) {
  const { filters, set, offset, setOffset } = usePagedFilters<Filters>(EMPTY);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const base = props.webhook ? `/api/webhooks/${encodeURIComponent(props.webhook)}/deliveries` : '/api/webhooks/deliveries';
  const qs = queryOf(props.webhook ? { ...filters, webhook: '' } : filters, offset);
  const page = useAsync(() => get<DeliveryPage>(`${base}${qs}`), [base, qs, props.refresh]);
  const redeliver = useAction((id: string) => post<{ delivery: Delivery }>(`/api/webhooks/deliveries/${encodeURIComponent(id)}/redeliver`));

  const pending = page.data?.deliveries.some((d) => d.state === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const t = setTimeout(page.reload, POLL_MS);
    return () => clearTimeout(t);
  }, [pending, page.data]);

  // A delivery that gave up is announced on the live socket: show its final state at once.
  useEffect(() => subscribe('notification', (m) => m.kind === 'webhook_failure' && page.reload()), []);

  const toggle = (id: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const doRedeliver = async (d: Delivery) => {
    setNotice(undefined);
    const res = await redeliver.run(d.id);
    if (res) {
      setNotice(`Delivery ${d.id} queued again (send ${res.delivery.sends}).`);
      page.reload();
    }
  };

  const total = page.data?.total_count ?? 0;
  const rows = page.data?.deliveries ?? [];
  const cols = props.webhook ? 6 : 7;
  return (
    <section class="deliveries" aria-label="Delivery history">
      <div class="toolbar">
        {!props.webhook && (
          <Field label="Endpoint">
            <Select value={filters.webhook} onChange={(v) => set('webhook', v)} options={[{ value: '', label: 'All endpoints' }, ...(props.webhooks ?? []).map((w) => ({ value: w, label: w }))]} />
          </Field>
        )}
        <Field label="Outcome">
          <Select value={filters.outcome} onChange={(v) => set('outcome', v)} options={[{ value: '', label: 'Any outcome' }, ...DELIVERY_STATES]} />
        </Field>
        <Field label="Delivery event">
          <Select value={filters.event} onChange={(v) => set('event', v)} options={[{ value: '', label: 'Any event' }, ...WEBHOOK_EVENTS]} />
        </Field>
        <Field label="Response status">
          <Select value={filters.status_class} onChange={(v) => set('status_class', v)} options={[{ value: '', label: 'Any status' }, ...STATUS_CLASSES]} />
        </Field>
        <Field label="From">
          <TextInput type="datetime-local" value={filters.start} onInput={(v) => set('start', v)} />
        </Field>
        <Field label="To">
          <TextInput type="datetime-local" value={filters.end} onInput={(v) => set('end', v)} />
        </Field>
        <Field label="Delivery or request id">
          <TextInput type="search" value={filters.lookup} onInput={(v) => set('lookup', v)} placeholder="msg_… or job id" />
        </Field>
      </div>
      <ErrorBox error={page.error} />
      <ErrorBox error={redeliver.error} />
      {notice && <Banner kind="success">{notice}</Banner>}
      {page.loading && !page.data ? (
        <Loading />
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Webhook deliveries">
          <table class="table" data-testid="deliveries">
            <caption class="sr-only">Webhook deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                {!props.webhook && <th scope="col">Endpoint</th>}
                <th scope="col">State</th>
                <th scope="col" class="num">
                  Status
                </th>
                <th scope="col">Last error</th>
                <th scope="col">Created / next retry</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 ? (
                <EmptyRow colSpan={cols}>No deliveries match.</EmptyRow>
              ) : (
                rows.map((d) => (
                  <Fragment key={d.id}>
                    <tr data-delivery={d.id}>
                      <td>
                        {d.event}
                        <br />
                        <code class="muted small">{d.id}</code>
                      </td>
                      {!props.webhook && (
                        <td>
                          <a href={`#/webhooks/${encodeURIComponent(d.webhook)}`}>{d.webhook}</a>
                        </td>
                      )}
                      <td>
                        <span class={`badge badge-${d.state === 'delivered' ? 'ok' : d.state === 'pending' ? 'warn' : 'error'}`}>{stateLabel(d)}</span>
                        {d.sends > 1 && <span class="muted"> · send {d.sends}</span>}
                      </td>
                      <td class="num">{d.last_status_code ?? '—'}</td>
                      <td class="wrap">{d.last_error ?? ''}</td>
                      <td class="nowrap">
                        {formatTime(d.created_at)}
                        {d.state === 'pending' && d.next_attempt_at && (
                          <>
                            <br />
                            <span class="muted">next {formatTime(d.next_attempt_at)}</span>
                          </>
                        )}
                      </td>
                      <td class="actions">
                        <button type="button" class="btn btn-default" aria-expanded={open.has(d.id)} aria-label={`Attempts of ${d.id}`} onClick={() => toggle(d.id)}>
                          Attempts ({d.attempts.length})
                        </button>
                        <Button onClick={() => void doRedeliver(d)} disabled={redeliver.busy || d.state === 'pending'} label={`Redeliver ${d.id}`}>
                          Redeliver
                        </Button>
                      </td>
                    </tr>
                    {open.has(d.id) && (
                      <DetailRow colSpan={cols}>
                        <Attempts delivery={d} />
                      </DetailRow>
                    )}
                  </Fragment>
                ))
              )}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Delivery pages" offset={offset} pageSize={PAGE_SIZE} total={total} onOffset={setOffset} />
    </section>
  );
}
