// Dashboard notifications from the live socket (new errors, budget thresholds, webhook failures, MCP
// client state changes): a toast for each as it arrives, and a list of recent ones in the header.
import { useEffect, useRef, useState } from 'preact/hooks';
import { onLiveStatus, subscribe, type LiveMessage, type LiveStatus } from '../lib/live.ts';
import { formatTime } from '../lib/format.ts';

export interface Notice {
  seq: number;
  kind: string;
  message: string;
  at: string;
  data: Record<string, unknown>;
}

const KEEP = 50;
const TOAST_MS = 8000;
const MAX_TOASTS = 3;

const KIND_LABEL: Record<string, string> = {
  request_error: 'Request error',
  budget_threshold: 'Budget threshold',
  webhook_failure: 'Webhook failure',
  mcp_client_state: 'MCP client',
};

const tone = (kind: string): string => (kind === 'request_error' || kind === 'webhook_failure' ? 'toast-error' : kind === 'budget_threshold' ? 'toast-warn' : '');

/** Where a notice leads: the failed request's log, the budget, the webhook, the MCP client. */
function linkOf(n: Notice): string | undefined {
  const id = n.data.log_id ?? n.data.request_id ?? n.data.id;
  switch (n.kind) {
    case 'request_error':
      return typeof id === 'string' ? `#/logs/${encodeURIComponent(id)}` : '#/logs?status=error';
    case 'budget_threshold':
      return '#/budgets';
    case 'webhook_failure':
      return '#/webhooks';
    case 'mcp_client_state':
      return '#/mcp';
    default:
      return undefined;
  }
}

function toNotice(m: LiveMessage, seq: number): Notice {
  return {
    seq,
    kind: typeof m.kind === 'string' ? m.kind : 'notice',
    message: typeof m.message === 'string' ? m.message : JSON.stringify(m.data ?? m),
    at: typeof m.at === 'string' ? m.at : new Date().toISOString(),
    data: m.data && typeof m.data === 'object' ? (m.data as Record<string, unknown>) : {},
  };
}

function NoticeText(props: { n: Notice }) {
  const link = linkOf(props.n);
  return (
    <>
      <span class="toast-kind">
        {KIND_LABEL[props.n.kind] ?? props.n.kind} · {formatTime(props.n.at)}
      </span>
      {link ? <a href={link}>{props.n.message}</a> : props.n.message}
    </>
  );
}

export function Notifications() {
  const [list, setList] = useState<Notice[]>([]);
  const [toasts, setToasts] = useState<Notice[]>([]);
  const [unread, setUnread] = useState(0);
  const [open, setOpen] = useState(false);
  const [live, setLive] = useState<LiveStatus>('idle');
  const seq = useRef(0);
  const panel = useRef<HTMLDivElement>(null);

  useEffect(
    () =>
      subscribe('notification', (m) => {
        const n = toNotice(m, ++seq.current);
        setList((l) => [n, ...l].slice(0, KEEP));
        setToasts((t) => [...t, n].slice(-MAX_TOASTS));
        setUnread((u) => u + 1);
        setTimeout(() => setToasts((t) => t.filter((x) => x.seq !== n.seq)), TOAST_MS);
      }),
    [],
  );

  useEffect(() => onLiveStatus(setLive), []);

  useEffect(() => {
    if (!open) return;
    setUnread(0);
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setOpen(false);
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [open]);

  return (
    <>
      <button type="button" class="btn" aria-expanded={open} aria-controls="notify-panel" data-live={live} title={live === 'open' ? 'Live updates: connected' : 'Live updates: reconnecting'} onClick={() => setOpen(!open)}>
        <span class={`live-dot${live === 'open' ? ' live-on' : ''}`} aria-hidden="true" />
        <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
          <path d="M6 16V11a6 6 0 0 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0" fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" />
        </svg>
        <span class="hide-phone">Notifications</span>
        {unread > 0 && (
          <span class="notify-count">
            {unread}
            <span class="sr-only"> new</span>
          </span>
        )}
      </button>
      {open && (
        <div class="notify-panel" id="notify-panel" ref={panel} role="region" aria-label="Notifications">
          {list.length === 0 ? (
            <p class="muted">No notifications since this page was opened.</p>
          ) : (
            <ul>
              {list.map((n) => (
                <li key={n.seq}>
                  <NoticeText n={n} />
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <div class="notify-region" role="log" aria-live="polite" aria-label="New notifications">
        {toasts.map((n) => (
          <div key={n.seq} class={`toast ${tone(n.kind)}`}>
            <div class="toast-body">
              <NoticeText n={n} />
            </div>
            <button type="button" class="btn" aria-label="Dismiss notification" onClick={() => setToasts((t) => t.filter((x) => x.seq !== n.seq))}>
              ×
            </button>
          </div>
        ))}
      </div>
    </>
  );
}
