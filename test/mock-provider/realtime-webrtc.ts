// OpenAI's Realtime API over WebRTC, as the real one answers it: `POST /v1/realtime/calls` (also
// /openai/v1 and Azure's /azure/openai/v1) with a multipart `sdp` + `session` (or an application/sdp
// body and ?model=), `Authorization: Bearer <key>` (Azure: `api-key` too). The offer is answered by a
// real WebRTC peer (node-datachannel, bound to 127.0.0.1, no STUN): 201, the answer SDP and
// `Location: /v1/realtime/calls/<call_id>`. The `oai-events` data channel speaks the same Realtime
// events as the WebSocket mock (realtime.ts), except that a reply's audio goes as RTP (Opus
// frames of silence, 5 of 20 ms a word) between output_audio_buffer.started and .stopped; audio
// the client sends as RTP is counted and makes up a committed turn's input (one token a 100 ms).
// `POST /v1/realtime/calls/<call_id>/hangup` ends a call. A call whose session's `instructions` are
// `echo audio` sends each RTP packet back as it arrives, its payload unchanged (bench/realtime-webrtc.ts
// times a packet's round trip with it).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomInt } from 'node:crypto';
import type { PeerConnection, Track } from 'node-datachannel';
import { parseMultipart, UploadedFile } from './multipart.ts';
import { runRealtimeEvents, type RealtimeRecord } from './realtime.ts';

export interface WebrtcCallRecord extends RealtimeRecord {
  callId: string;
  /** The session part as received. */
  session: Record<string, unknown>;
  offer: string;
  answer: string;
  /** RTP packets received from the caller, and sent to it. */
  rtpIn: number;
  rtpOut: number;
  hungUp: boolean;
}

const CALL_PATHS = new Set(['/openai/v1/realtime/calls', '/v1/realtime/calls', '/azure/openai/v1/realtime/calls']);
const ACTION = /^(?:\/openai|\/azure\/openai)?\/v1\/realtime\/calls\/([A-Za-z0-9_-]+)\/hangup$/;
/** An Opus packet of silence (TOC 0xf8: CELT fullband 20 ms, one frame), as encoders send in DTX. */
const OPUS_SILENCE = Buffer.from([0xf8, 0xff, 0xfe]);

type Ndc = typeof import('node-datachannel');
let ndc: Promise<Ndc> | undefined;

function json(res: ServerResponse, status: number, message: string, code: string, param: string | null = null): void {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', code, param } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function keyOf(req: IncomingMessage, azure: boolean): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim();
  const k = azure ? req.headers['api-key'] : undefined;
  return Array.isArray(k) ? k[0] : k;
}

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v instanceof UploadedFile) return v.data.toString('utf8');
  return undefined;
}

export function serveWebrtc(): { handles(path: string): boolean; handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void; calls: WebrtcCallRecord[]; close(): void } {
  const calls: WebrtcCallRecord[] = [];
  const peers = new Map<string, PeerConnection>();
  let n = 0;
  const id = (prefix: string) => `${prefix}_mock${(++n).toString(36).padStart(6, '0')}`;

  const hangup = (res: ServerResponse, callId: string): void => {
    const pc = peers.get(callId);
    const record = calls.find((c) => c.callId === callId);
    if (!pc || !record) {
      json(res, 404, `Call '${callId}' not found.`, 'call_not_found');
      return;
    }
    record.hungUp = true;
    pc.close();
    peers.delete(callId);
    res.writeHead(200, { 'content-length': 0 });
    res.end();
  };

  const create = async (req: IncomingMessage, res: ServerResponse, body: Buffer, url: URL): Promise<void> => {
    const azure = url.pathname.startsWith('/azure/');
    const key = keyOf(req, azure);
    if (!key || key.startsWith('invalid')) return json(res, 401, 'Incorrect API key provided.', 'invalid_api_key');
    const type = req.headers['content-type'] ?? '';
    let offer: string | undefined;
    let session: Record<string, unknown> = {};
    if (/^multipart\/form-data/i.test(type)) {
      const form = parseMultipart(body, type);
      offer = text(form?.sdp);
      const raw = text(form?.session);
      if (raw !== undefined) {
        try {
          session = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          return json(res, 400, 'We could not parse the JSON body of the session part.', 'invalid_json', 'session');
        }
      }
    } else if (/^application\/sdp/i.test(type)) {
      offer = body.toString('utf8');
      const m = url.searchParams.get('model');
      if (m) session = { type: 'realtime', model: m };
    }
    if (!offer?.startsWith('v=0')) return json(res, 400, "Missing required parameter: 'sdp'.", 'missing_required_parameter', 'sdp');
    const model = typeof session.model === 'string' ? session.model : '';
    if (!model || model.startsWith('nonexistent')) return json(res, 400, `The model '${model}' does not exist or you do not have access to it.`, 'model_not_found', 'session.model');
    const opus = /a=rtpmap:(\d+) opus\/48000/i.exec(offer);
    const { PeerConnection, Audio } = await (ndc ??= import('node-datachannel'));
    const pc = new PeerConnection('mock-provider', { iceServers: [], bindAddress: '127.0.0.1', disableAutoNegotiation: true });
    const callId = id('rtc');
    const record: WebrtcCallRecord = { path: url.pathname, query: Object.fromEntries(url.searchParams), headers: { ...req.headers }, events: [], callId, session, offer, answer: '', rtpIn: 0, rtpOut: 0, hungUp: false };
    let track: Track | undefined;
    let mediaMs = 0;
    const ssrc = randomInt(1, 2 ** 31);
    let seq = randomInt(0, 65_536);
    let ts = randomInt(0, 2 ** 31);
    if (opus) {
      const mid = /m=audio[^\n]*\r?\n(?:[^\n]*\r?\n)*?a=mid:(\S+)/.exec(offer)?.[1] ?? '0';
      const audio = new Audio(mid, 'SendRecv');
      audio.addOpusCodec(Number(opus[1]));
      audio.addSSRC(ssrc, 'mock-provider');
      track = pc.addTrack(audio);
      track.onMessage((packet) => {
        // RTP only (RTCP's packet types 192-223 sit in the second byte).
        if (packet.length < 12 || (packet[1] >= 192 && packet[1] <= 223)) return;
        record.rtpIn++;
        mediaMs += 20;
        if (echo && track?.isOpen()) {
          const back = Buffer.from(packet);
          back[1] = (back[1] & 0x80) | (pt & 0x7f);
          back.writeUInt16BE((seq = (seq + 1) & 0xffff), 2);
          back.writeUInt32BE(ssrc, 8);
          track.sendMessageBinary(back);
          record.rtpOut++;
        }
      });
    }
    const pt = opus ? Number(opus[1]) : 111;
    const echo = session.instructions === 'echo audio';
    const mediaAudio = (frames: number): void => {
      for (let i = 0; i < frames && track?.isOpen(); i++) {
        const header = Buffer.alloc(12);
        header[0] = 0x80;
        header[1] = pt & 0x7f;
        header.writeUInt16BE((seq = (seq + 1) & 0xffff), 2);
        header.writeUInt32BE((ts = (ts + 960) >>> 0), 4);
        header.writeUInt32BE(ssrc, 8);
        track.sendMessageBinary(Buffer.concat([header, OPUS_SILENCE]));
        record.rtpOut++;
      }
    };
    pc.onDataChannel((dc) => {
      if (dc.getLabel() !== 'oai-events') return;
      const start = (): void =>
        runRealtimeEvents(
          {
            open: () => dc.isOpen(),
            send: (t) => void dc.sendMessage(t),
            onMessage: (cb) => dc.onMessage((m) => cb(typeof m === 'string' ? m : Buffer.from(m as Buffer).toString('utf8'))),
            ...(track && {
              mediaAudio,
              takeMediaMs: () => {
                const ms = mediaMs;
                mediaMs = 0;
                return ms;
              },
            }),
          },
          model,
          record,
          id,
        );
      // No close callback on the channel: node-datachannel frees its message callback (and the
      // messages still queued toward it) when that runs. The connection's state says when it ends.
      if (dc.isOpen()) start();
      else dc.onOpen(start);
    });
    pc.onStateChange((state) => {
      if (state === 'closed' || state === 'failed' || state === 'disconnected') record.closed ??= { code: state === 'closed' ? 1000 : 1006, reason: state };
    });
    // The offer's candidates are checked only once the answer is on its way, as OpenAI's peer can
    // afford to: a libdatachannel offerer checked before it has the answer closes its connection.
    const candidates: [string, string][] = [];
    let mid = '';
    const bare = offer
      .split(/\r?\n/)
      .filter((line) => {
        if (line.startsWith('a=mid:')) mid = line.slice(6);
        if (line.startsWith('a=candidate:')) candidates.push([line.slice(2), mid || '0']);
        return !line.startsWith('a=candidate:') && line !== 'a=end-of-candidates';
      })
      .join('\r\n');
    try {
      pc.setRemoteDescription(bare, 'offer');
    } catch (err) {
      pc.close();
      return json(res, 400, `Invalid SDP offer: ${(err as Error).message}`, 'invalid_offer', 'sdp');
    }
    // Listened to before gathering starts: a state change with no listener is not told later.
    const gathered = new Promise<void>((resolve) => pc.onGatheringStateChange((s) => s === 'complete' && resolve()));
    pc.setLocalDescription();
    if (pc.gatheringState() !== 'complete') await gathered;
    const answer = pc.localDescription()?.sdp ?? '';
    record.answer = answer;
    calls.push(record);
    peers.set(callId, pc);
    res.writeHead(201, { 'content-type': 'application/sdp', location: `/v1/realtime/calls/${callId}`, 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
    setTimeout(() => {
      for (const [candidate, m] of candidates) {
        try {
          pc.addRemoteCandidate(candidate, m);
        } catch {
          // the call already ended
        }
      }
    }, 100);
  };

  return {
    calls,
    handles: (path) => CALL_PATHS.has(path) || ACTION.test(path),
    handle(req, res, body) {
      const url = new URL(req.url ?? '/', 'http://mock');
      if (req.method !== 'POST') return json(res, 405, 'Method not allowed.', 'method_not_allowed');
      const action = ACTION.exec(url.pathname);
      if (action) return hangup(res, action[1]);
      create(req, res, body, url).catch((err: unknown) => {
        if (!res.headersSent) json(res, 500, `mock WebRTC failed: ${String(err)}`, 'server_error');
      });
    },
    close() {
      for (const pc of peers.values()) pc.close();
      peers.clear();
    },
  };
}
