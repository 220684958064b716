// A Gemini Live session behind the relay's UpstreamLink: client events are translated
// (gemini-translate.ts) into BidiGenerateContent messages, Gemini's messages into OpenAI Realtime
// events. Messages after `setup` wait for Gemini's `setupComplete`, as the Live API asks.
import type { RawData } from 'ws';
import type { Connected } from './upstream.ts';
import { GeminiTranslator } from './gemini-translate.ts';
import { closeProvider, type UpstreamLink } from './link.ts';

export function geminiLink({ ws, takeEarly }: Connected, model: string): UpstreamLink {
  const t = new GeminiTranslator({ model });
  let emit: ((text: string) => void) | undefined;
  let ready = false;
  let setupSent = false;
  const queued: string[] = [];
  ws.on('error', () => undefined);
  const toGemini = (message: Record<string, unknown>): void => {
    const text = JSON.stringify(message);
    if (!setupSent && 'setup' in message) {
      setupSent = true;
      if (ws.readyState === 1) ws.send(text);
      return;
    }
    if (!ready) queued.push(text);
    else if (ws.readyState === 1) ws.send(text);
  };
  const toClient = (event: Record<string, unknown>): void => emit?.(JSON.stringify(event));
  const onMessage = (data: RawData): void => {
    let message: Record<string, unknown>;
    try {
      // Gemini sends its JSON in binary frames as often as in text ones.
      message = JSON.parse((Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)).toString('utf8')) as Record<string, unknown>;
    } catch {
      return;
    }
    if (message.setupComplete !== undefined && !ready) {
      ready = true;
      for (const text of queued.splice(0)) if (ws.readyState === 1) ws.send(text);
      return;
    }
    for (const event of t.fromGemini(message)) toClient(event);
  };
  // Gemini says nothing before its setup; anything it did say is read first all the same.
  for (const data of takeEarly()) onMessage(data);
  ws.on('message', onMessage);
  return {
    send: (_text, event) => {
      const out = t.fromClient(event);
      for (const m of out.toGemini) toGemini(m);
      for (const e of out.toClient) toClient(e);
    },
    onEvent: (cb) => {
      emit = cb;
      // OpenAI greets a new session with session.created; Gemini says nothing until its setup.
      queueMicrotask(() => toClient(t.sessionCreated()));
    },
    // A provider that hung up while the client's handshake completed is reported all the same.
    onClose: (cb) => (ws.readyState === 3 ? queueMicrotask(() => cb(1006, '')) : void ws.once('close', (code: number, reason: Buffer) => cb(code, reason.toString('utf8')))),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    close: (code, reason) => closeProvider(ws, code, reason),
  };
}
