// The provider side of a session as the relay sees it: OpenAI Realtime events in and out, whatever
// the provider speaks. OpenAI and Azure speak them already (this file); Gemini's Live API is
// translated by gemini-link.ts behind the same interface.
import type { RawData } from 'ws';
import type { Connected } from './upstream.ts';
import { textSender } from './ws-frame.ts';

/** A provider's side that reads the client events it sends (a translating link): each comes parsed. */
interface ReadingLink extends LinkBase {
  readonly bytesOnly?: false;
  /** A client event (OpenAI's shape, already checked) for the provider: its text or UTF-8 bytes, and the event read. */
  send(data: string | Buffer, event: { type: string; [k: string]: unknown }): void;
}

/**
 * A provider's side that sends a client event's bytes as they are: the session need not parse an
 * event it does not itself read (client-scan.ts), and hands over no event then.
 */
interface BytesLink extends LinkBase {
  readonly bytesOnly: true;
  /** A client event (already checked) for the provider: its text or UTF-8 bytes. */
  send(data: string | Buffer, event?: { type: string; [k: string]: unknown }): void;
}

export type UpstreamLink = ReadingLink | BytesLink;

interface LinkBase {
  /** Each provider event, in OpenAI's shape: text, or the UTF-8 bytes a relayed provider sent. */
  onEvent(cb: (data: string | Buffer) => void): void;
  /** The provider's socket ended (code, reason as it gave them). */
  onClose(cb: (code: number, reason: string) => void): void;
  /** Stop or go on reading the provider's socket (backpressure from a slow client). */
  pause(): void;
  resume(): void;
  close(code: number, reason: string): void;
}

/**
 * Ends the provider's socket: reading resumes (a paused socket would never see the provider's close
 * frame, queued behind what it still had to send), and a provider that does not finish the close
 * handshake soon is cut.
 */
export function closeProvider(ws: Connected['ws'], code: number, reason: string): void {
  if (ws.readyState !== 0 && ws.readyState !== 1) return;
  ws.resume();
  ws.close(code, reason);
  setTimeout(() => ws.terminate(), 2000).unref();
}

/**
 * OpenAI Realtime events relayed as they are: as bytes both ways (a text frame's payload is handed
 * on without being decoded to a string and encoded again; the session reads only the few events it
 * must, turns.ts).
 */
export function relayLink({ ws, takeEarly }: Connected): UpstreamLink {
  ws.on('error', () => undefined);
  // A client event's checked bytes, masked into one frame and one write (ws-frame.ts).
  const sendText = textSender(ws);
  // The provider greets at once (session.created), before the client's handshake is complete:
  // what arrives before the relay listens waits here.
  let emit: ((data: Buffer) => void) | undefined;
  const early: Buffer[] = takeEarly();
  // binaryType 'nodebuffer' (the default): every message, fragmented or not, is one Buffer.
  ws.on('message', (data: RawData) => {
    if (emit) emit(data as Buffer);
    else early.push(data as Buffer);
  });
  return {
    bytesOnly: true,
    send: (data) => {
      if (ws.readyState === 1) sendText(data);
    },
    onEvent: (cb) => {
      emit = cb;
      for (const data of early.splice(0)) cb(data);
    },
    // A provider that hung up while the client's handshake completed is reported all the same.
    onClose: (cb) => (ws.readyState === 3 ? queueMicrotask(() => cb(1006, '')) : void ws.once('close', (code: number, reason: Buffer) => cb(code, reason.toString('utf8')))),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    close: (code, reason) => closeProvider(ws, code, reason),
  };
}
