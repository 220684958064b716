// The `oai-events` data channels of a WebRTC call as the session sees them: the client's as a
// ClientPort, the provider's as an UpstreamLink (events that came before the session listened are
// kept by the leg), so the call is governed by the same session as a WebSocket. A data channel has no close codes: ending the session retires
// the leg (Leg.retire), so its last event (an error event, when governance ends it) still reaches the peer.
import type { ClientPort } from './client-port.ts';
import type { UpstreamLink } from './link.ts';
import type { Leg } from './webrtc-peer.ts';

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
    close: () => void leg.retire(),
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
    close: () => void leg.retire(),
  };
}
