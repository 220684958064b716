// One realtime session: the client's side (a ClientPort: a WebSocket, or a WebRTC data channel) relayed to the provider's (an UpstreamLink), with the
// gateway in the middle of every event. Client frames are checked (a bad one ends this session
// only, with an `error` event first); each finished turn is charged (meter.ts) and a spent budget
// ends the session; idle and maximum lengths, and backpressure: while the client has more than
// `maxBufferedBytes` unsent, the provider's socket is not read, and a client that stays behind for
// `backpressureMs` is disconnected. drain() ends it between turns (or at the grace period's end).
import type { ClientPort } from './client-port.ts';
import { badFrameEvent, errorEvent, isBadFrame, readClientFrame, type ClientEvent } from './protocol.ts';
import { scannedClientType } from './client-scan.ts';
import { eventType, TurnTracker, type EventData, type TurnSummary } from './turns.ts';
import type { UpstreamLink } from './link.ts';

export interface SessionBounds {
  idleMs: number;
  maxMs: number;
  maxEventBytes: number;
  maxBufferedBytes: number;
  backpressureMs: number;
}

/** Why a session ended (a metrics label and the log record's status). */
export type EndReason = 'client' | 'upstream' | 'idle' | 'max_duration' | 'budget' | 'bad_frame' | 'backpressure' | 'shutdown' | 'error';

export interface SessionEnd {
  reason: EndReason;
  /** The close code the client was sent (or received). */
  code: number;
  message: string;
}

export interface SessionHooks {
  /** A turn finished: charge it. Answers a message when the session must end (its budget is spent). */
  onTurn(turn: TurnSummary): Promise<string | undefined>;
  /** An event passed (for the events metric). */
  onEvent(direction: 'client' | 'server'): void;
  /**
   * A client event the gateway must see before the provider does: answers an `error` event to send
   * back instead of relaying it (the session goes on), or the event to relay in its place.
   */
  screen?(event: ClientEvent): { refuse: string } | { relay: ClientEvent } | undefined;
  /**
   * Whether screen() must see a client event, told from its type and its bytes (checked as JSON):
   * one it would pass untouched is relayed without being parsed. Without it, every event is screened.
   */
  screens?(type: string, data: Buffer): boolean;
}

/** Close codes (RFC 6455 and the registry): what the SDK reports on its socket's close event. */
export const CLOSE = { normal: 1000, goingAway: 1001, unsupportedData: 1003, invalidPayload: 1007, policy: 1008, tooBig: 1009, internal: 1011, tryAgain: 1013 } as const;

/** The tracker reads the time only for the events whose time it keeps. */
const clock = (): number => performance.now();

const BAD_FRAME_CLOSE: Readonly<Record<string, number>> = { binary_frame: CLOSE.unsupportedData, invalid_json: CLOSE.invalidPayload, invalid_event: CLOSE.invalidPayload, unknown_event: CLOSE.policy, event_too_large: CLOSE.tooBig };

export class RealtimeSession {
  readonly tracker = new TurnTracker();
  readonly #client: ClientPort;
  readonly #upstream: UpstreamLink;
  readonly #bounds: SessionBounds;
  readonly #hooks: SessionHooks;
  readonly #finished = Promise.withResolvers<SessionEnd>();
  #ended: SessionEnd | undefined;
  #idle: NodeJS.Timeout | undefined;
  #max: NodeJS.Timeout;
  #paused: NodeJS.Timeout | undefined;
  #pausedSince = 0;
  #draining = false;
  /** Turns being charged: the session's end waits for them, so the log record has every turn. */
  #charging: Promise<unknown> = Promise.resolve();

  constructor(client: ClientPort, upstream: UpstreamLink, bounds: SessionBounds, hooks: SessionHooks) {
    this.#client = client;
    this.#upstream = upstream;
    this.#bounds = bounds;
    this.#hooks = hooks;
    this.#max = setTimeout(() => this.#end('max_duration', CLOSE.normal, `the session reached this gateway's maximum length (${bounds.maxMs / 1000} s)`, 'session_expired'), bounds.maxMs);
    this.#touch();
    client.onMessage((data, isBinary) => this.#fromClient(data, isBinary));
    client.onClose((code) => this.#end('client', code, 'the client closed the session'));
    upstream.onEvent((data) => this.#fromUpstream(data));
    upstream.onClose((code, reason) => {
      // 1005/1006 (no code, a dropped connection) are not sendable: the client gets 1011.
      const sendable = code === 1000 || code === 1001 || (code >= 1007 && code <= 1014 && code !== 1010) || (code >= 3000 && code < 5000);
      this.#end('upstream', sendable ? code : CLOSE.internal, reason || 'the provider closed the session', sendable && code === 1000 ? undefined : 'upstream_closed');
    });
  }

  /** Resolves once the session is over and its turns are charged. */
  get done(): Promise<SessionEnd> {
    return this.#finished.promise;
  }

  /** Shutdown: end now if no response is being produced, else once it is done. */
  drain(): void {
    this.#draining = true;
    if (!this.tracker.inFlight) this.#end('shutdown', CLOSE.goingAway, 'the gateway is shutting down: reconnect to continue', 'gateway_shutdown');
  }

  /** The call was hung up (a WebRTC call's /hangup): ends it as the client's own close would. */
  hangup(): void {
    this.#end('client', CLOSE.normal, 'the call was hung up');
  }

  /** Shutdown's grace is over: end whatever is in flight. */
  cut(): void {
    this.#end('shutdown', CLOSE.goingAway, 'the gateway is shutting down: reconnect to continue', 'gateway_shutdown');
  }

  #touch(): void {
    if (this.#idle) this.#idle.refresh();
    else this.#idle = setTimeout(() => this.#end('idle', CLOSE.normal, `no event either way for ${this.#bounds.idleMs / 1000} s: the session is closed`, 'session_idle_timeout'), this.#bounds.idleMs);
  }

  #fromClient(data: Buffer, isBinary: boolean): void {
    if (this.#ended) return;
    this.#touch();
    const upstream = this.#upstream;
    // An event no one here reads the inside of (most are audio appends) is checked off its bytes
    // and sent on as they are, with no string or object made of it; any other is parsed.
    if (upstream.bytesOnly && !isBinary && data.length <= this.#bounds.maxEventBytes) {
      const type = scannedClientType(data);
      if (type !== undefined && !this.#screens(type, data)) {
        this.#hooks.onEvent('client');
        this.tracker.client(type, data, clock);
        upstream.send(data);
        return;
      }
    }
    const read = readClientFrame(data, isBinary, this.#bounds.maxEventBytes);
    if (isBadFrame(read)) {
      this.#end('bad_frame', BAD_FRAME_CLOSE[read.code] ?? CLOSE.policy, read.message, undefined, badFrameEvent(read));
      return;
    }
    this.#hooks.onEvent('client');
    // The frame's own bytes go on (checked above), unless governance rewrote the event.
    let out: EventData = data;
    let event = read;
    const screened = this.#hooks.screen?.(read);
    if (screened && 'refuse' in screened) {
      this.#client.send(screened.refuse);
      return;
    }
    if (screened) {
      event = screened.relay;
      out = JSON.stringify(event);
    }
    this.tracker.client(event.type, out, clock);
    upstream.send(out, event);
  }

  /** Whether the hooks' screen must read this event. */
  #screens(type: string, data: Buffer): boolean {
    const hooks = this.#hooks;
    return hooks.screen !== undefined && (hooks.screens === undefined || hooks.screens(type, data));
  }

  /** Media passed (a WebRTC call's audio): the session is not idle. */
  touch(): void {
    if (!this.#ended) this.#touch();
  }

  #fromUpstream(data: EventData): void {
    if (this.#ended) return;
    this.#touch();
    this.#hooks.onEvent('server');
    const type = eventType(data);
    let turn: TurnSummary | undefined;
    if (type !== undefined) {
      try {
        turn = this.tracker.server(type, data, clock);
      } catch {
        // A provider event that is not JSON is relayed as it came; it carries no numbers to read.
      }
    }
    this.#client.send(data);
    this.#backpressure();
    if (turn) this.#charge(turn);
  }

  #charge(turn: TurnSummary): void {
    const charged = this.#charging.then(() => this.#hooks.onTurn(turn));
    this.#charging = charged.catch(() => undefined);
    void charged.then(
      (spent) => {
        if (spent) this.#end('budget', CLOSE.policy, spent, 'budget_exceeded');
        else if (this.#draining) this.drain();
      },
      () => undefined,
    );
  }

  /** Stops reading the provider while the client is behind; disconnects a client that stays behind. */
  #backpressure(): void {
    if (this.#paused || this.#client.bufferedAmount <= this.#bounds.maxBufferedBytes) return;
    this.#upstream.pause();
    this.#pausedSince = performance.now();
    this.#paused = setInterval(() => {
      if (this.#ended) return;
      if (this.#client.bufferedAmount <= this.#bounds.maxBufferedBytes / 2) {
        clearInterval(this.#paused);
        this.#paused = undefined;
        this.#upstream.resume();
        return;
      }
      if (performance.now() - this.#pausedSince > this.#bounds.backpressureMs) {
        // The socket cannot take an error event (that is the problem): the close frame says it.
        this.#client.terminate();
        this.#end('backpressure', CLOSE.policy, 'the client did not read its events', undefined);
      }
    }, 25);
  }

  /** Ends the session once: an error event first (when `code` names one), then close frames both ways. */
  #end(reason: EndReason, closeCode: number, message: string, errorCode?: string, event?: string): void {
    if (this.#ended) return;
    const ended: SessionEnd = { reason, code: closeCode, message };
    this.#ended = ended;
    clearTimeout(this.#max);
    if (this.#idle) clearTimeout(this.#idle);
    if (this.#paused) clearInterval(this.#paused);
    const client = this.#client;
    if (client.open) {
      const errorText = event ?? (errorCode ? errorEvent(reason === 'budget' ? 'budget_exceeded' : reason === 'upstream' ? 'server_error' : 'invalid_request_error', errorCode, message) : undefined);
      if (errorText) client.send(errorText);
      client.close(closeCode, message);
    }
    this.#upstream.close(CLOSE.normal, reason === 'upstream' ? '' : 'the client session ended');
    void this.#charging.then(() => this.#finished.resolve(ended));
  }
}
