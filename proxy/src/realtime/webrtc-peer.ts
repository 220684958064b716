// The gateway's two WebRTC peers of a call (node-datachannel, libdatachannel's bindings, loaded on
// the first call: a gateway that never takes one never loads it). The client's leg answers the
// client's offer; the provider's leg offers to the provider. Each leg has at most one audio track
// (Opus, with an SSRC of the gateway's) and the `oai-events` data channel. No STUN or TURN: the
// gateway's host candidates are what it offers, on `bind_address` when one is configured.
import { randomInt } from 'node:crypto';
import type { DataChannel, PeerConnection, RtcConfig, Track } from 'node-datachannel';
import { lazy } from '../lazy.ts';
import { GatewayError } from '../unified/errors.ts';
import { splitCandidates, type OfferFacts } from './sdp.ts';

type Ndc = typeof import('node-datachannel');
const ndc = lazy<Ndc>('node-datachannel');

/** The data channel the Realtime API's events travel on (OpenAI's name for it). */
export const EVENTS_CHANNEL = 'oai-events';

export interface PeerNetwork {
  /** The local address the peers bind to and offer (all interfaces when unset). */
  bindAddress?: string;
  portRangeBegin?: number;
  portRangeEnd?: number;
}

/** A call on a handle that may be gone (libdatachannel throws once a closed peer's objects are freed). */
function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** Events kept for a session not yet listening; more is not a greeting. */
const MAX_EARLY = 1000;
/** How long a retiring leg waits for its events channel's queue to go to SCTP. */
const FLUSH_MS = 1000;
/**
 * Then how long the connection is kept for the peer to receive what SCTP holds (and its
 * retransmissions, on a loaded path) before the gateway closes it; a peer that closes first ends it sooner.
 */
const HOLD_MS = 5000;
/** Legs whose last events are still going to SCTP. */
const retiring = new Set<Promise<void>>();

/** Resolves once every retiring leg has handed its last events over (a drain waits for them). */
export async function legsRetired(): Promise<void> {
  await Promise.all(retiring);
}

/** One peer connection of a call, with its audio track and events channel. */
export class Leg {
  readonly pc: PeerConnection;
  readonly ssrc = randomInt(1, 2 ** 31);
  track: Track | undefined;
  #channel: DataChannel | undefined;
  readonly #opened = Promise.withResolvers<DataChannel>();
  readonly #ended: ((why: string) => void)[] = [];
  #over = false;
  #closed = false;
  #retired: Promise<void> | undefined;
  #emit: ((msg: string | Buffer) => void) | undefined;
  /** Messages that came before anyone listened (the provider greets as soon as its channel opens). */
  readonly #early: (string | Buffer)[] = [];

  constructor(name: string, net: PeerNetwork) {
    const config: RtcConfig = { iceServers: [], disableAutoNegotiation: true };
    if (net.bindAddress) config.bindAddress = net.bindAddress;
    if (net.portRangeBegin) config.portRangeBegin = net.portRangeBegin;
    if (net.portRangeEnd) config.portRangeEnd = net.portRangeEnd;
    this.pc = new (ndc().PeerConnection)(name, config);
    this.#opened.promise.catch(() => undefined);
    this.pc.onStateChange((state) => {
      if (state === 'failed' || state === 'closed' || state === 'disconnected') this.#end(`the peer connection is ${state}`);
    });
  }

  /** The events channel once open. */
  get opened(): Promise<DataChannel> {
    return this.#opened.promise;
  }

  get channel(): DataChannel | undefined {
    return this.#channel;
  }

  /** Adopts `dc` as the events channel; it resolves `opened` when it opens. */
  useChannel(dc: DataChannel): void {
    this.#channel = dc;
    if (dc.isOpen()) this.#opened.resolve(dc);
    else dc.onOpen(() => this.#opened.resolve(dc));
    dc.onMessage((msg) => {
      const m = typeof msg === 'string' ? msg : Buffer.isBuffer(msg) ? msg : Buffer.from(msg);
      if (this.#emit) this.#emit(m);
      else if (this.#early.length < MAX_EARLY) this.#early.push(m);
    });
    // No close callback: node-datachannel frees the channel's message callback, and the messages
    // still queued toward it (a provider's last events), when one runs. The connection's state
    // change (closed, failed, disconnected) ends the leg instead.
    dc.onError(() => this.#end('the data channel failed'));
  }

  /** Each message of the events channel, those that came before this was called first. */
  onMessage(cb: (msg: string | Buffer) => void): void {
    this.#emit = cb;
    for (const m of this.#early.splice(0)) cb(m);
  }

  /** Called once when the leg ends (its channel closed, its connection failed or closed). */
  onEnd(cb: (why: string) => void): void {
    if (this.#over) queueMicrotask(() => cb('already ended'));
    else this.#ended.push(cb);
  }

  get ended(): boolean {
    return this.#over;
  }

  #end(why: string): void {
    if (this.#over) return;
    this.#over = true;
    this.#opened.reject(new GatewayError(502, `the WebRTC connection ended before its events channel opened: ${why}`, { type: 'upstream_error', code: 'webrtc_failed' }));
    for (const cb of this.#ended.splice(0)) cb(why);
  }

  /** The local description once every candidate is gathered (no trickle ICE over one HTTP exchange). */
  async description(timeoutMs: number): Promise<string> {
    // Listened to before gathering starts: a state change with no listener is not told later.
    const gathered = Promise.withResolvers<void>();
    this.pc.onGatheringStateChange((state) => state === 'complete' && gathered.resolve());
    this.pc.setLocalDescription();
    if (this.pc.gatheringState() !== 'complete') {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new GatewayError(500, `ICE candidates were not gathered within ${timeoutMs} ms`, { type: 'internal_error', code: 'webrtc_gathering_timeout' })), timeoutMs);
      });
      try {
        await Promise.race([gathered.promise, late]);
      } finally {
        clearTimeout(timer);
      }
    }
    const sdp = this.pc.localDescription()?.sdp;
    if (!sdp) throw new GatewayError(500, 'the WebRTC peer produced no description', { type: 'internal_error', code: 'webrtc_failed' });
    return sdp;
  }

  /** The events channel is open (false once the leg ended: a closed one's handles are gone). */
  get channelOpen(): boolean {
    return !this.#over && this.#channel !== undefined && safe(() => this.#channel!.isOpen(), false);
  }

  /** Bytes the events channel has queued and not sent. */
  get buffered(): number {
    return this.channelOpen ? safe(() => this.#channel!.bufferedAmount(), 0) : 0;
  }

  sendText(text: string): void {
    if (this.channelOpen) safe(() => this.#channel!.sendMessage(text), false);
  }

  /** An RTP packet on the audio track, when it is open (a retiring leg sends none). */
  sendMedia(packet: Buffer): void {
    const track = this.track;
    if (!this.#over && !this.#retired && track && safe(() => track.isOpen(), false)) safe(() => track.sendMessageBinary(packet), false);
  }

  /**
   * Ends the leg without losing the last events sent on it: once the channel's queue has gone to SCTP,
   * the channel is closed (its stream reset travels after that data, so the peer sees the close only
   * once it has every event), and the connection is kept until the peer closes it or HOLD_MS pass.
   * Closing at once would drop what SCTP has not had acknowledged. Resolves once the channel is closed.
   */
  retire(): Promise<void> {
    this.#retired ??= new Promise<void>((resolve) => {
      const started = performance.now();
      const step = (): void => {
        if (this.channelOpen && this.buffered > 0 && performance.now() - started < FLUSH_MS) {
          setTimeout(step, 10).unref();
          return;
        }
        safe(() => this.#channel?.close(), undefined);
        resolve();
        if (this.#over) this.close();
        else {
          const hold = setTimeout(() => this.close(), HOLD_MS).unref();
          this.onEnd(() => {
            clearTimeout(hold);
            this.close();
          });
        }
      };
      step();
    });
    const retired = this.#retired;
    if (!retiring.has(retired)) {
      retiring.add(retired);
      void retired.then(() => retiring.delete(retired));
    }
    return retired;
  }

  close(): void {
    this.#end('closed by the gateway');
    if (this.#closed) return;
    this.#closed = true;
    safe(() => this.#channel?.close(), undefined);
    safe(() => this.track?.close(), undefined);
    safe(() => this.pc.close(), undefined);
  }
}

function audioTrack(leg: Leg, mid: string, payloadType: number): Track {
  const audio = new (ndc().Audio)(mid, 'SendRecv');
  audio.addOpusCodec(payloadType);
  audio.addSSRC(leg.ssrc, 'skybridge', 'skybridge', 'audio');
  return leg.pc.addTrack(audio);
}

/**
 * The client's leg: answers its offer; the client opens the events channel. The offer's candidates
 * are applied by `connect()`, once the answer is on its way (splitCandidates says why).
 */
export async function answerClient(offer: string, facts: OfferFacts, net: PeerNetwork, timeoutMs: number): Promise<{ leg: Leg; answer: string; connect(): void }> {
  const leg = new Leg('skybridge-client', net);
  try {
    // The answer's audio section is the gateway's own track (same mid, Opus only, its SSRC).
    if (facts.audio) leg.track = audioTrack(leg, facts.audio.mid, facts.audio.opusPayloadType);
    leg.pc.onDataChannel((dc) => {
      if (dc.getLabel() === EVENTS_CHANNEL && !leg.channel) leg.useChannel(dc);
      else dc.close();
    });
    const { offer: bare, candidates } = splitCandidates(offer);
    try {
      leg.pc.setRemoteDescription(bare, 'offer');
    } catch (err) {
      throw new GatewayError(400, `the SDP offer could not be applied: ${(err as Error).message.slice(0, 300)}`, { param: 'sdp', code: 'invalid_sdp' });
    }
    const answer = await leg.description(timeoutMs);
    const connect = (): void => {
      for (const c of candidates) safe(() => leg.pc.addRemoteCandidate(c.candidate, c.mid || facts.dataMid), undefined);
    };
    return { leg, answer, connect };
  } catch (err) {
    leg.close();
    throw err;
  }
}

/** The provider's leg: an offer with the same media as the client's, its events channel opened by the gateway. */
export async function offerProvider(facts: OfferFacts, net: PeerNetwork, timeoutMs: number): Promise<{ leg: Leg; offer: string }> {
  const leg = new Leg('skybridge-provider', net);
  try {
    if (facts.audio) leg.track = audioTrack(leg, '0', facts.audio.opusPayloadType);
    leg.useChannel(leg.pc.createDataChannel(EVENTS_CHANNEL));
    return { leg, offer: await leg.description(timeoutMs) };
  } catch (err) {
    leg.close();
    throw err;
  }
}
