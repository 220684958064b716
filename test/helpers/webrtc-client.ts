// A WebRTC client on loopback, as a browser's RTCPeerConnection would call the Realtime API: an
// Opus audio track (payload type 111, its own SSRC) and the `oai-events` data channel, offered with
// every candidate gathered (node-datachannel bound to 127.0.0.1, no STUN). It counts the RTP
// packets it receives, keeps the events, and sends Opus frames of silence as its microphone.
// Every peer made here is closed by closeAllPeers() (a peer left open keeps node --test waiting).
import { randomInt } from 'node:crypto';
import nodeDataChannel, { type DataChannel, type PeerConnection, type Track } from 'node-datachannel';

const peers = new Set<ClientPeer>();

export const OPUS_PT = 111;
/** An Opus packet of silence (TOC 0xf8: CELT fullband 20 ms, one frame). */
const OPUS_SILENCE = Buffer.from([0xf8, 0xff, 0xfe]);

export interface RealtimeEvent {
  type: string;
  [k: string]: unknown;
}

export class ClientPeer {
  readonly pc: PeerConnection;
  readonly dc: DataChannel;
  readonly track: Track | undefined;
  readonly events: RealtimeEvent[] = [];
  /** RTP packets received: their payload types and SSRCs. */
  readonly rtp: { pt: number; ssrc: number }[] = [];
  /** Called with each RTP packet received, instead of keeping it in `rtp` (a benchmark's many packets). */
  onRtp: ((packet: Buffer) => void) | undefined;
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  readonly ssrc = randomInt(1, 2 ** 31);
  #seq = randomInt(0, 65_536);
  #ts = randomInt(0, 2 ** 31);

  constructor(opts: { audio?: boolean } = {}) {
    peers.add(this);
    this.pc = new nodeDataChannel.PeerConnection('test-client', { iceServers: [], bindAddress: '127.0.0.1', disableAutoNegotiation: true });
    if (opts.audio !== false) {
      const audio = new nodeDataChannel.Audio('0', 'SendRecv');
      audio.addOpusCodec(OPUS_PT);
      audio.addSSRC(this.ssrc, 'test-client', 'test-stream', 'mic');
      this.track = this.pc.addTrack(audio);
      this.track.onMessage((packet) => {
        if (packet.length < 12 || (packet[1] >= 192 && packet[1] <= 223)) return;
        if (this.onRtp) this.onRtp(packet);
        else this.rtp.push({ pt: packet[1] & 0x7f, ssrc: packet.readUInt32BE(8) });
      });
    }
    this.dc = this.pc.createDataChannel('oai-events');
    // No close callback on the channel: node-datachannel frees a channel's message callback (and the
    // messages still queued toward it) when its close callback runs. The connection's state says it.
    this.dc.onMessage((m) => this.events.push(JSON.parse(typeof m === 'string' ? m : Buffer.from(m as Buffer).toString('utf8')) as RealtimeEvent));
    this.opened = new Promise((resolve) => this.dc.onOpen(() => resolve()));
    this.closed = new Promise((resolve) => {
      this.pc.onStateChange((s) => (s === 'closed' || s === 'failed' || s === 'disconnected') && resolve());
    });
  }

  /** The offer, with every candidate gathered. */
  async offer(): Promise<string> {
    // Listened to before gathering starts: a state change with no listener is not told later.
    const gathered = new Promise<void>((resolve) => this.pc.onGatheringStateChange((s) => s === 'complete' && resolve()));
    this.pc.setLocalDescription();
    if (this.pc.gatheringState() !== 'complete') await gathered;
    return this.pc.localDescription()!.sdp;
  }

  accept(answer: string): void {
    try {
      this.pc.setRemoteDescription(answer, 'answer');
    } catch (err) {
      throw new Error(`${(err as Error).message} (state ${this.pc.state()}, ice ${this.pc.iceState()}, signaling ${this.pc.signalingState()})\n${answer}`);
    }
  }

  send(event: RealtimeEvent): void {
    this.dc.sendMessage(JSON.stringify(event));
  }

  /** `frames` Opus frames of 20 ms (silence unless `payload` is given), as a microphone would send them. */
  sendAudio(frames: number, payload: Buffer = OPUS_SILENCE): void {
    for (let i = 0; i < frames; i++) {
      const header = Buffer.alloc(12);
      header[0] = 0x80;
      header[1] = OPUS_PT;
      header.writeUInt16BE((this.#seq = (this.#seq + 1) & 0xffff), 2);
      header.writeUInt32BE((this.#ts = (this.#ts + 960) >>> 0), 4);
      header.writeUInt32BE(this.ssrc, 8);
      this.track!.sendMessageBinary(Buffer.concat([header, payload]));
    }
  }

  close(): void {
    peers.delete(this);
    try {
      this.dc.close();
    } catch {
      // already closed
    }
    this.pc.close();
  }
}

export function closeAllPeers(): void {
  for (const p of [...peers]) p.close();
}
