// OpenAI's Realtime API over WebSocket (GA event names), at /openai/v1/realtime and /v1/realtime
// (`Authorization: Bearer <key>`) and Azure OpenAI's /azure/openai/v1/realtime (`api-key` or
// Bearer). Deterministic: a response answers `Mock reply to: <last user text>` (or
// `Mock reply to: [audio <ms> ms]` after committed audio), one transcript delta and 0.1 s of PCM16
// audio (24 kHz) per word, then `response.done` with usage: input tokens are the words of the
// user's text (an audio input: one token per 100 ms), output tokens the words of the reply.
// A user text `flood <n>` answers n audio deltas of 64 KiB at once (for backpressure tests);
// `slow` spaces the response's events 200 ms apart (for drain tests). Gemini's Live API is
// gemini-live.ts, on the same upgrade listener.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { GEMINI_LIVE_PATH, runGeminiLive } from './gemini-live.ts';
import { keep } from './recorded.ts';

export interface RealtimeRecord {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Client events received, parsed. */
  events: { type: string; [k: string]: unknown }[];
  closed?: { code: number; reason: string };
}

const PATHS = new Set(['/openai/v1/realtime', '/v1/realtime', '/azure/openai/v1/realtime', GEMINI_LIVE_PATH]);
const BYTES_PER_WORD = 4800; // 0.1 s of 24 kHz PCM16

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function refuse(socket: Duplex, status: number, message: string, code: string): void {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', code, param: null } });
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Not Found'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

function keyOf(req: IncomingMessage, azure: boolean): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim();
  if (azure) {
    const k = req.headers['api-key'];
    return Array.isArray(k) ? k[0] : k;
  }
  return undefined;
}

/** Serves the realtime paths on the mock's server; answers the sessions seen so far (the last `maxRecorded`, and as many events of each). */
export function serveRealtime(server: Server, maxRecorded = Infinity): { sessions: RealtimeRecord[]; close(): void } {
  const sessions: RealtimeRecord[] = [];
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const open = new Set<WebSocket>();
  let n = 0;
  const id = (prefix: string) => `${prefix}_mock${(++n).toString(36).padStart(6, '0')}`;

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://mock');
    if (!PATHS.has(url.pathname)) {
      refuse(socket, 404, `no WebSocket at ${url.pathname}`, 'not_found');
      return;
    }
    const azure = url.pathname.startsWith('/azure/');
    const gemini = url.pathname === GEMINI_LIVE_PATH;
    const googKey = req.headers['x-goog-api-key'];
    const key = gemini ? ((Array.isArray(googKey) ? googKey[0] : googKey) ?? url.searchParams.get('key') ?? undefined) : keyOf(req, azure);
    if (!key || key.startsWith('invalid')) {
      refuse(socket, 401, 'Incorrect API key provided.', 'invalid_api_key');
      return;
    }
    const model = url.searchParams.get('model') ?? '';
    if (!gemini && (!model || model.startsWith('nonexistent'))) {
      refuse(socket, 404, `The model '${model}' does not exist or you do not have access to it.`, 'model_not_found');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const record: RealtimeRecord = { path: url.pathname, query: Object.fromEntries(url.searchParams), headers: { ...req.headers }, events: [] };
      keep(sessions, record, maxRecorded);
      open.add(ws);
      if (gemini) runGeminiLive(ws, record, maxRecorded);
      else runRealtimeEvents({ open: () => ws.readyState === 1, send: (text) => ws.send(text), onMessage: (cb) => void ws.on('message', (data: Buffer) => cb(data.toString())) }, model, record, id, maxRecorded);
      ws.once('close', (code: number, reason: Buffer) => {
        record.closed = { code, reason: reason.toString() };
        open.delete(ws);
      });
    });
  });
  return {
    sessions,
    close() {
      for (const ws of open) ws.terminate();
      wss.close();
    },
  };
}

/** Where a session's events travel: a WebSocket, or a WebRTC call's `oai-events` data channel. */
export interface EventChannel {
  open(): boolean;
  send(text: string): void;
  onMessage(cb: (text: string) => void): void;
  /**
   * A WebRTC call's audio goes as media, not as events: called with the 20 ms Opus frames of each
   * reply word (then no audio delta events are sent), and with 0 when a response's audio ends.
   */
  mediaAudio?(frames: number): void;
  /** Milliseconds of audio received as media since the last call (a WebRTC call's microphone). */
  takeMediaMs?(): number;
}

/** The OpenAI Realtime event protocol of one session on `ws`. */
export function runRealtimeEvents(ws: EventChannel, model: string, record: RealtimeRecord, id: (prefix: string) => string, maxRecorded = Infinity): void {
  const session: Record<string, unknown> = {
    id: id('sess'),
    object: 'realtime.session',
    type: 'realtime',
    model,
    output_modalities: ['audio'],
    audio: { input: { format: { type: 'audio/pcm', rate: 24000 } }, output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy' } },
  };
  let lastText = '';
  let audioBytes = 0;
  let committedAudioBytes = 0;
  const send = (event: Record<string, unknown>) => {
    if (ws.open()) ws.send(JSON.stringify({ event_id: id('event'), ...event }));
  };
  const error = (message: string, code: string, eventId?: unknown) =>
    send({ type: 'error', error: { type: 'invalid_request_error', code, message, param: null, event_id: eventId ?? null } });
  send({ type: 'session.created', session });

  ws.onMessage((data) => {
    let event: { type?: unknown; [k: string]: unknown };
    try {
      event = JSON.parse(data) as typeof event;
    } catch {
      error('We could not parse the JSON body of your request.', 'invalid_json');
      return;
    }
    if (typeof event.type !== 'string') {
      error('Missing required parameter: \'type\'.', 'missing_required_parameter');
      return;
    }
    keep(record.events, event as RealtimeRecord['events'][number], maxRecorded);
    switch (event.type) {
      case 'session.update':
        Object.assign(session, (event.session as object | undefined) ?? {});
        send({ type: 'session.updated', session });
        return;
      case 'conversation.item.create': {
        const item = (event.item ?? {}) as { content?: { type?: string; text?: string }[]; role?: string };
        const text = (item.content ?? []).filter((c) => c.type === 'input_text' && typeof c.text === 'string').map((c) => c.text).join(' ');
        if (text) lastText = text;
        const created = { id: id('item'), object: 'realtime.item', type: 'message', status: 'completed', role: item.role ?? 'user', content: item.content ?? [] };
        send({ type: 'conversation.item.added', previous_item_id: null, item: created });
        send({ type: 'conversation.item.done', previous_item_id: null, item: created });
        return;
      }
      case 'input_audio_buffer.append':
        audioBytes += Buffer.from(String(event.audio ?? ''), 'base64').length;
        return;
      case 'input_audio_buffer.commit': {
        const itemId = id('item');
        committedAudioBytes = audioBytes + Math.round(((ws.takeMediaMs?.() ?? 0) * 48000) / 1000);
        audioBytes = 0;
        lastText = '';
        send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: itemId });
        return;
      }
      case 'input_audio_buffer.clear':
        audioBytes = 0;
        send({ type: 'input_audio_buffer.cleared' });
        return;
      case 'response.create':
        respond();
        return;
      case 'response.cancel':
      case 'conversation.item.delete':
      case 'conversation.item.truncate':
      case 'conversation.item.retrieve':
      case 'output_audio_buffer.clear':
        return;
      default:
        error(`Invalid value: '${event.type}'. Supported values are: 'session.update', 'input_audio_buffer.append', 'input_audio_buffer.commit', 'input_audio_buffer.clear', 'conversation.item.create', 'conversation.item.truncate', 'conversation.item.delete', 'conversation.item.retrieve', 'response.create', 'response.cancel', and 'output_audio_buffer.clear'.`, 'invalid_value', event.event_id);
    }
  });

  function respond(): void {
    const audioMs = Math.round((committedAudioBytes / 48000) * 1000);
    const prompt = lastText || (committedAudioBytes ? `[audio ${audioMs} ms]` : '');
    const replyText = `Mock reply to: ${prompt}`;
    const inputTokens = lastText ? words(lastText) : Math.ceil(audioMs / 100);
    const outputTokens = words(replyText);
    const responseId = id('resp');
    const itemId = id('item');
    const textOnly = Array.isArray(session.output_modalities) && !(session.output_modalities as string[]).includes('audio');
    const flood = /^flood (\d+)$/.exec(lastText);
    const slow = lastText === 'slow';
    const events: Record<string, unknown>[] = [];
    events.push({ type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [] } });
    events.push({ type: 'response.output_item.added', response_id: responseId, output_index: 0, item: { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
    if (flood) {
      const chunk = Buffer.alloc(64 * 1024).toString('base64');
      for (let i = 0; i < Number(flood[1]); i++) events.push({ type: 'response.output_audio.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: chunk });
    } else if (textOnly) {
      for (const w of replyText.split(' ')) events.push({ type: 'response.output_text.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: `${w} ` });
      events.push({ type: 'response.output_text.done', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, text: replyText });
    } else {
      const audio = Buffer.alloc(BYTES_PER_WORD, 1).toString('base64');
      for (const w of replyText.split(' ')) {
        events.push({ type: 'response.output_audio_transcript.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: `${w} ` });
        if (!ws.mediaAudio) events.push({ type: 'response.output_audio.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: audio });
      }
      events.push({ type: 'response.output_audio.done', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 });
      events.push({ type: 'response.output_audio_transcript.done', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, transcript: replyText });
    }
    const content = textOnly ? [{ type: 'output_text', text: replyText }] : [{ type: 'output_audio', transcript: replyText }];
    const item = { id: itemId, type: 'message', role: 'assistant', status: 'completed', content };
    events.push({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item });
    events.push({
      type: 'response.done',
      response: {
        id: responseId,
        object: 'realtime.response',
        status: 'completed',
        output: [item],
        usage: {
          total_tokens: inputTokens + outputTokens,
          input_tokens: inputTokens,
          output_tokens: outputTokens,
          input_token_details: { cached_tokens: 0, text_tokens: lastText ? inputTokens : 0, audio_tokens: lastText ? 0 : inputTokens },
          output_token_details: { text_tokens: textOnly ? outputTokens : 0, audio_tokens: textOnly ? 0 : outputTokens },
        },
      },
    });
    committedAudioBytes = 0;
    if (ws.mediaAudio && !textOnly && !flood) {
      // As over WebRTC: the audio buffer starts, the audio goes as RTP (5 frames of 20 ms a word),
      // then the rest of the events and the buffer's stop.
      const media = ws.mediaAudio.bind(ws);
      const [created, added, ...rest] = events;
      send(created);
      send(added);
      send({ type: 'output_audio_buffer.started', response_id: responseId });
      setTimeout(() => {
        media(5 * outputTokens);
        setTimeout(() => {
          for (const e of rest) send(e);
          send({ type: 'output_audio_buffer.stopped', response_id: responseId });
        }, slow ? 1500 : 60);
      }, 30);
      return;
    }
    if (!slow) {
      for (const e of events) send(e);
      return;
    }
    let i = 0;
    const step = () => {
      if (i >= events.length || !ws.open()) return;
      send(events[i++]);
      setTimeout(step, 200);
    };
    step();
  }
}
