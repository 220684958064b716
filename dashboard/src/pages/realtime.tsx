// Realtime sessions: the open sessions of this replica (GET /api/realtime/sessions) with their
// virtual key, team, model, provider, turns, tokens and cost, kept current by the dashboard socket's
// `realtime` events (opened, turn, ended) without a reload (and read again every 15 s, or on Refresh,
// in case the socket missed one); ended sessions link to their log record. Responses API WebSocket
// connections (transport `responses_ws`) are listed alike: a turn is a response answered, and the
// link opens the latest response's record.
import { useEffect, useState } from 'preact/hooks';
import { get } from '../lib/api.ts';
import { onLiveStatus, subscribe, type LiveStatus } from '../lib/live.ts';
import { formatCost, formatNumber, formatTime } from '../lib/format.ts';
import { hrefOf } from '../shell/route.ts';
import { Button, ErrorBox, Loading, PageHeader, Table, type Column } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import type { RealtimeSessionView, RealtimeSessionsAnswer } from '../../../proxy/src/api/answers.ts';

/** A re-read now and then, in case the socket missed an event (a reconnect). */
const RESYNC_MS = 15_000;

/** The answer with one event applied: pure, so an event arriving twice changes nothing. */
export function applyEvent(s: RealtimeSessionsAnswer, event: string, v: RealtimeSessionView): RealtimeSessionsAnswer {
  const open = s.open.filter((x) => x.id !== v.id);
  if (event === 'ended') return { open, ended: [v, ...s.ended.filter((x) => x.id !== v.id)].slice(0, 50) };
  const at = s.open.findIndex((x) => x.id === v.id);
  if (at >= 0) open.splice(at, 0, v);
  else open.push(v);
  return { open, ended: s.ended };
}

const duration = (from: string, to: number): string => {
  const s = Math.max(0, Math.round((to - Date.parse(from)) / 1000));
  return s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
};

const cost = (v: RealtimeSessionView) => `${formatCost(v.cost)}${v.cost_incomplete ? ' (some turns unpriced)' : ''}`;

/** What the link opens: the session's own record, or a Responses WebSocket connection's latest response's. */
const recordOf = (v: RealtimeSessionView) => (v.transport === 'responses_ws' ? 'log record of the latest response of the connection' : 'log record of the session');

const common: Column<RealtimeSessionView>[] = [
  { label: 'Virtual key', render: (v) => (v.virtual_key_id ? <a href={hrefOf('virtual-keys', [v.virtual_key_id])}>{v.virtual_key_name ?? v.virtual_key_id}</a> : '—') },
  { label: 'Team', render: (v) => v.team_id ?? '—' },
  { label: 'Model', render: (v) => v.model || '—' },
  { label: 'Provider', render: (v) => v.provider || '—' },
  { label: 'Turns', numeric: true, render: (v) => formatNumber(v.turns) },
  { label: 'Tokens', numeric: true, render: (v) => formatNumber(v.total_tokens) },
  { label: 'Cost', numeric: true, render: cost },
  { label: 'Transport', render: (v) => v.transport },
];

export function RealtimePage(_props: PageProps) {
  const [state, setState] = useState<RealtimeSessionsAnswer | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [live, setLive] = useState<LiveStatus>('idle');
  const [now, setNow] = useState(Date.now());
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let gone = false;
    const load = () =>
      get<RealtimeSessionsAnswer>('/api/realtime/sessions').then(
        (a) => !gone && (setState(a), setError(undefined)),
        (e: unknown) => !gone && setError(e),
      );
    void load();
    const resync = setInterval(() => void load(), RESYNC_MS);
    return () => {
      gone = true;
      clearInterval(resync);
    };
  }, [tick]);

  useEffect(() => {
    const unsub = subscribe('realtime', (m) => {
      const v = m.data as RealtimeSessionView | undefined;
      if (!v || typeof v.id !== 'string' || typeof m.event !== 'string') return;
      setState((s) => (s ? applyEvent(s, m.event as string, v) : s));
    });
    const unStatus = onLiveStatus(setLive);
    // Durations tick while sessions are open.
    const clock = setInterval(() => setNow(Date.now()), 1000);
    return () => {
      unsub();
      unStatus();
      clearInterval(clock);
    };
  }, []);

  return (
    <>
      <PageHeader title="Realtime sessions">
        <span class="muted" role="status">
          {live === 'open' ? 'Live' : live === 'connecting' ? 'Connecting…' : 'Not live: refreshing every 15 s'}
        </span>
        <Button onClick={() => setTick((t) => t + 1)}>Refresh</Button>
      </PageHeader>
      <p class="muted">
        Voice and text sessions on <code>/v1/realtime</code> and Responses API WebSocket connections on <code>/v1/responses</code> (transport <code>responses_ws</code>, a turn per response) open
        on this gateway process (each replica lists its own), with what their turns used so far. An ended session's request log record holds its sums and its turns; a connection's link opens
        its latest response's record.
      </p>
      <ErrorBox error={error} />
      {!state ? (
        !error && <Loading />
      ) : (
        <>
          <h2>Open ({state.open.length})</h2>
          <Table<RealtimeSessionView>
            caption="Open realtime sessions"
            cards
            rows={state.open}
            rowKey={(v) => v.id}
            empty="No session is open."
            columns={[{ label: 'Started', render: (v) => `${formatTime(v.started_at)} (${duration(v.started_at, now)})` }, ...common]}
          />
          <h2>Recently ended ({state.ended.length})</h2>
          <Table<RealtimeSessionView>
            caption="Recently ended realtime sessions"
            cards
            rows={state.ended}
            rowKey={(v) => v.id}
            empty="No session has ended since the gateway started."
            columns={[
              { label: 'Ended', render: (v) => (v.log_id ? <a href={hrefOf('logs', [v.log_id])} aria-label={`${recordOf(v)} ended ${formatTime(v.ended_at)}`}>{formatTime(v.ended_at)}</a> : formatTime(v.ended_at)) },
              { label: 'Length', render: (v) => (v.ended_at ? duration(v.started_at, Date.parse(v.ended_at)) : '—') },
              { label: 'Why', render: (v) => v.end_reason ?? '—' },
              ...common,
            ]}
          />
        </>
      )}
    </>
  );
}
