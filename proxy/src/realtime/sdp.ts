// The SDP and RTP facts a WebRTC call needs, read and written as pure functions (the peers,
// webrtc-peer.ts, do the I/O). The gateway relays audio without transcoding, so both legs must
// carry Opus: the client's offer is read for its Opus payload type and the media sections the
// gateway will answer, and every RTP packet is retagged (payload type, SSRC) for the leg it goes
// out on, its payload untouched.
import { isIP } from 'node:net';
import { GatewayError } from '../unified/errors.ts';

/** An offer is a few KiB; more is refused before it is parsed. */
export const MAX_SDP_BYTES = 64 * 1024;

export interface OfferFacts {
  /** The audio section (at most one), when the client sends or receives audio. */
  audio: { mid: string; opusPayloadType: number } | undefined;
  /** The data channel section's mid: the `oai-events` channel rides on it. */
  dataMid: string;
}

const bad = (message: string): GatewayError => new GatewayError(400, message, { param: 'sdp', code: 'invalid_sdp' });

interface Section {
  kind: string;
  protocol: string;
  lines: string[];
}

function sections(sdp: string): Section[] {
  const out: Section[] = [];
  for (const line of sdp.split(/\r?\n/)) {
    if (line.startsWith('m=')) {
      const [kind = '', , protocol = ''] = line.slice(2).split(' ');
      out.push({ kind, protocol, lines: [] });
    } else if (out.length > 0 && line) {
      out[out.length - 1].lines.push(line);
    }
  }
  return out;
}

const attr = (s: Section, name: string): string | undefined => s.lines.find((l) => l.startsWith(`a=${name}:`))?.slice(name.length + 3);

/** The client's offer, checked: a 400 naming `sdp` and what is wrong when it cannot be answered. */
export function readOffer(sdp: string): OfferFacts {
  if (Buffer.byteLength(sdp) > MAX_SDP_BYTES) throw bad(`the SDP offer is over ${MAX_SDP_BYTES} bytes`);
  if (!/^v=0\r?\n/.test(sdp)) throw bad('the SDP offer must start with "v=0" (a session description, RFC 8866): send the localDescription.sdp of an RTCPeerConnection after createOffer()');
  if (!/\r?\na=fingerprint:/.test(`\n${sdp}`)) throw bad('the SDP offer has no a=fingerprint line: WebRTC needs DTLS');
  const all = sections(sdp);
  if (all.length === 0) throw bad('the SDP offer has no media section (m=): offer an audio track and a data channel');
  const data = all.filter((s) => s.kind === 'application');
  if (data.length !== 1 || !data[0].protocol.includes('SCTP')) throw bad('the SDP offer must have one data channel section (m=application ... webrtc-datachannel): the Realtime events travel on the "oai-events" data channel');
  const audio = all.filter((s) => s.kind === 'audio');
  if (audio.length > 1) throw bad('the SDP offer has more than one audio section: a realtime call carries one audio track');
  const other = all.find((s) => s.kind !== 'audio' && s.kind !== 'application');
  if (other) throw bad(`the SDP offer has a ${other.kind.slice(0, 20)} section: a realtime call carries one audio track and one data channel`);
  const dataMid = attr(data[0], 'mid');
  if (!dataMid) throw bad('the data channel section of the SDP offer has no a=mid line');
  if (audio.length === 0) return { audio: undefined, dataMid };
  const mid = attr(audio[0], 'mid');
  if (!mid) throw bad('the audio section of the SDP offer has no a=mid line');
  const opus = audio[0].lines.map((l) => /^a=rtpmap:(\d{1,3}) opus\/48000(?:\/2)?$/i.exec(l)).find((m) => m !== null);
  if (!opus) throw bad('the audio section of the SDP offer does not offer Opus (a=rtpmap:<pt> opus/48000/2): the gateway relays audio without transcoding, and the providers speak Opus');
  const pt = Number(opus[1]);
  if (pt < 96 || pt > 127) throw bad(`the Opus payload type ${pt} is outside the dynamic range 96-127`);
  return { audio: { mid, opusPayloadType: pt }, dataMid };
}

/**
 * An offer without its ICE candidates, and the candidates with the mid of their section: the
 * answerer applies them only once its answer is out. A libdatachannel offerer that receives the
 * answerer's connectivity checks and DTLS hello before it has the answer closes its connection;
 * browsers wait, but a peer checked before it could know the answer should not have to.
 */
export function splitCandidates(sdp: string): { offer: string; candidates: { candidate: string; mid: string }[] } {
  const lines = sdp.split(/\r?\n/);
  const kept: string[] = [];
  const candidates: { candidate: string; mid: string }[] = [];
  let pending: string[] = [];
  let mid = '';
  for (const line of lines) {
    if (line.startsWith('m=')) {
      for (const c of pending) candidates.push({ candidate: c, mid });
      pending = [];
      mid = '';
    }
    if (line.startsWith('a=mid:')) mid = line.slice(6);
    if (line.startsWith('a=candidate:')) pending.push(line.slice(2));
    else if (line !== 'a=end-of-candidates') kept.push(line);
  }
  for (const c of pending) candidates.push({ candidate: c, mid });
  return { offer: kept.join('\r\n'), candidates };
}

/** The Opus payload type an answer chose (the provider's), or undefined when it has none. */
export function answerOpusPayloadType(sdp: string): number | undefined {
  const m = /\r?\na=rtpmap:(\d{1,3}) opus\/48000/i.exec(`\n${sdp}`);
  return m ? Number(m[1]) : undefined;
}

/** The connection addresses of an answer's ICE candidates (`a=candidate:` lines), as written. */
export function candidateAddresses(sdp: string): string[] {
  const out: string[] = [];
  for (const line of sdp.split(/\r?\n/)) {
    if (!line.startsWith('a=candidate:')) continue;
    // foundation component transport priority address port typ ...
    const address = line.slice('a=candidate:'.length).split(' ')[4];
    if (address) out.push(address);
  }
  return out;
}

/** Why an answer's candidate may not be dialled: a name (resolved outside the egress guard), or a blocked address. */
export function refusedCandidate(sdp: string, blocked: (ip: string) => string | undefined): string | undefined {
  for (const address of candidateAddresses(sdp)) {
    if (isIP(address) === 0) return `the provider's answer names a candidate by host name (${address.slice(0, 100)}), which the gateway does not resolve`;
    const why = blocked(address);
    if (why) return why;
  }
  return undefined;
}

/**
 * RTP, not RTCP (RFC 5761 demultiplexing: RTCP packet types 192-223 in the second byte) and not
 * anything shorter than an RTP header.
 */
export function isRtp(packet: Buffer): boolean {
  if (packet.length < 12 || packet[0] >> 6 !== 2) return false;
  const second = packet[1];
  return second < 192 || second > 223;
}

/** Puts the outgoing leg's payload type and SSRC on a packet, in place; the payload is not touched. */
export function retag(packet: Buffer, payloadType: number, ssrc: number): Buffer {
  packet[1] = (packet[1] & 0x80) | (payloadType & 0x7f);
  packet.writeUInt32BE(ssrc >>> 0, 8);
  return packet;
}

/** 48 kHz, the Opus RTP clock (RFC 7587) whatever the encoder's rate. */
const OPUS_CLOCK = 48_000;
/** A gap longer than this in timestamps is a pause, counted as one packet's usual 20 ms. */
const MAX_STEP = OPUS_CLOCK / 5;

/** Packets, bytes and seconds of one direction's audio, from the RTP timestamps. */
export class MediaCount {
  packets = 0;
  bytes = 0;
  seconds = 0;
  #last: number | undefined;

  /** Counts a packet; answers the seconds it adds. */
  add(packet: Buffer): number {
    this.packets++;
    this.bytes += packet.length;
    const ts = packet.readUInt32BE(4);
    const step = this.#last === undefined ? 960 : (ts - this.#last) >>> 0;
    this.#last = ts;
    const seconds = (step > 0 && step <= MAX_STEP ? step : 960) / OPUS_CLOCK;
    this.seconds += seconds;
    return seconds;
  }
}
