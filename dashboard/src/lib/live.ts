// The dashboard's one live connection: a WebSocket to /ws opened with a short-lived, single-use
// ticket (POST /api/session/ws-ticket, so no long-lived credential travels in a URL), shared by every
// subscriber, reconnecting with backoff, and closed when nobody listens any more.
import { ApiError, post } from './api.ts';

/** A server message: `{type:"log", data}` or `{type:"notification", kind, message, data, at}`. */
export interface LiveMessage {
  type: string;
  [field: string]: unknown;
}

export type LiveStatus = 'idle' | 'connecting' | 'open' | 'closed';

type Listener = (msg: LiveMessage) => void;

const listeners = new Map<string, Set<Listener>>();
const statusListeners = new Set<(s: LiveStatus) => void>();
let socket: WebSocket | undefined;
let status: LiveStatus = 'idle';
let attempt = 0;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
/** Bumped on every close so an in-flight connect that lost the race does not open a stale socket. */
let generation = 0;

const MAX_BACKOFF_MS = 30_000;

function setStatus(s: LiveStatus): void {
  if (s === status) return;
  status = s;
  for (const l of statusListeners) l(s);
}

function subscriberCount(): number {
  let n = 0;
  for (const set of listeners.values()) n += set.size;
  return n;
}

/** Whether the gateway wants a ticket (auth on); unknown until the shell says, then asked anyway. */
let ticketsNeeded: boolean | undefined;

/** The shell tells what GET /api/dashboard said, so an open gateway is not asked for a ticket it refuses. */
export function setLiveAuth(authEnabled: boolean): void {
  ticketsNeeded = authEnabled;
}

async function ticketQuery(): Promise<string> {
  if (ticketsNeeded === false) return '';
  try {
    const t = await post<{ ticket: string }>('/api/session/ws-ticket', {});
    return `?ticket=${encodeURIComponent(t.ticket)}`;
  } catch (e) {
    // 403: authentication is off, and a loopback client may connect without a ticket.
    if (e instanceof ApiError && e.status === 403) return '';
    throw e;
  }
}

async function connect(): Promise<void> {
  const mine = ++generation;
  setStatus('connecting');
  let query: string;
  try {
    query = await ticketQuery();
  } catch {
    if (mine === generation) scheduleRetry();
    return;
  }
  if (mine !== generation || subscriberCount() === 0) return;
  const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws${query}`;
  const ws = new WebSocket(url);
  socket = ws;
  ws.onopen = () => {
    attempt = 0;
    setStatus('open');
  };
  ws.onmessage = (ev: MessageEvent) => {
    if (typeof ev.data !== 'string') return;
    let msg: LiveMessage;
    try {
      msg = JSON.parse(ev.data) as LiveMessage;
    } catch {
      return;
    }
    if (!msg || typeof msg.type !== 'string') return;
    for (const l of [...(listeners.get(msg.type) ?? []), ...(listeners.get('*') ?? [])]) {
      try {
        l(msg);
      } catch (err) {
        console.error('live listener failed', err);
      }
    }
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = undefined;
    setStatus('closed');
    if (subscriberCount() > 0) scheduleRetry();
  };
}

function scheduleRetry(): void {
  setStatus('closed');
  if (retryTimer !== undefined) return;
  // 1 s, 2 s, 4 s … capped, with jitter so many tabs do not reconnect in lockstep after a restart.
  const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** attempt) * (0.75 + Math.random() * 0.5);
  attempt = Math.min(attempt + 1, 10);
  retryTimer = setTimeout(() => {
    retryTimer = undefined;
    if (subscriberCount() > 0 && !socket) void connect();
  }, delay);
}

function disconnect(): void {
  generation++;
  if (retryTimer !== undefined) clearTimeout(retryTimer);
  retryTimer = undefined;
  attempt = 0;
  const ws = socket;
  socket = undefined;
  ws?.close(1000, 'no subscribers');
  setStatus('idle');
}

/** Calls `cb` for every message of `type` ('*' for all); returns the unsubscribe function. */
export function subscribe(type: string, cb: Listener): () => void {
  let set = listeners.get(type);
  if (!set) listeners.set(type, (set = new Set()));
  set.add(cb);
  if (!socket && retryTimer === undefined && status !== 'connecting') void connect();
  return () => {
    set.delete(cb);
    if (set.size === 0) listeners.delete(type);
    if (subscriberCount() === 0) disconnect();
  };
}

/** The connection's state now and on every change (for a "live" indicator). */
export function onLiveStatus(cb: (s: LiveStatus) => void): () => void {
  statusListeners.add(cb);
  cb(status);
  return () => statusListeners.delete(cb);
}

/** Drops the connection and opens a new one (after a login: the old ticket's session is gone). */
export function reconnectLive(): void {
  if (subscriberCount() === 0) return;
  disconnect();
  void connect();
}
