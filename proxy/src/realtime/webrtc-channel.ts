// The `oai-events` data channels of a WebRTC call as the session sees them: the client's as a
// ClientPort, the provider's as an UpstreamLink (events that came before the session listened are
// kept by the leg), so the call is governed by the same session as a WebSocket. A data channel has no close codes: ending the session ends the leg's peer connection,
// once the last event (an error event, when governance ends it) has been handed to the transport.
import type { ClientPort } from './client-port.ts';
import type { UpstreamLink } from './link.ts';
import type { Leg } from './webrtc-peer.ts';

/** How long an ending leg waits for its data channel's queue to drain before closing. */
const FLUSH_MS = 1000;
/** Then how long SCTP is given to deliver what it was handed (a few round trips on any path a call works on). */
const SCTP_LINGER_MS = 500;

function flushThenClose(leg: Leg): void {
  const started = performance.now();
  const step = (): void => {
    if (!leg.channelOpen || leg.buffered === 0 || performance.now() - started > FLUSH_MS) {
      // What the channel handed to SCTP is not on the wire yet, and closing the connection drops it:
      // the peer gets SCTP_LINGER_MS to receive it before the channel and the connection close.
      setTimeout(() => {
        leg.closeChannel();
        setTimeout(() => leg.close(), 200).unref();
      }, SCTP_LINGER_MS).unref();
      return;
    }
    setTimeout(step, 10).unref();
  };
  step();
}

/** The client's events channel (open) as the session's client side. */
export function channelPort(leg: Leg): ClientPort {
  return {
    onMessage: (cb) => leg.onMessage((msg) => (typeof msg === 'string' ? cb(Buffer.from(msg, 'utf8'), false) : cb(msg, true))),
    // No close code on a data channel: 1000 when it closed, 1006 when the connection failed.
    onClose: (cb) => leg.onEnd((why) => cb(why.includes('failed') ? 1006 : 1000)),
    send: (data) => leg.sendText(typeof data === 'string' ? data : data.toString('utf8')),
    get bufferedAmount() {
      return leg.buffered;
    },
    get open() {
      return leg.channelOpen;
    },
    close: () => flushThenClose(leg),
    terminate: () => leg.close(),
  };
}

/** The provider's events channel as the session's upstream; events before the session listens wait. */
export function channelLink(leg: Leg): UpstreamLink {
  return {
    send: (data) => leg.sendText(typeof data === 'string' ? data : data.toString('utf8')),
    onEvent: (cb) => leg.onMessage((msg) => cb(typeof msg === 'string' ? msg : msg.toString('utf8'))),
    onClose: (cb) => leg.onEnd((why) => cb(why.includes('failed') || why.includes('disconnected') ? 1006 : 1000, why.startsWith('closed by the gateway') ? '' : `the provider's WebRTC connection ended (${why})`)),
    // A data channel cannot be left unread: a slow client is disconnected by the session instead.
    pause: () => undefined,
    resume: () => undefined,
    close: () => flushThenClose(leg),
  };
}
