// The client side of a realtime session as the session sees it: text events in and out, a send
// buffer to watch, and an end. A WebSocket is one (wsPort, below); a WebRTC call's `oai-events` data
// channel is another (webrtc-channel.ts), so both kinds of session share one governed relay.
import type { RawData, WebSocket } from 'ws';
import { textSender } from './ws-frame.ts';

export interface ClientPort {
  /** Each message from the client: its bytes, and whether it came as binary. */
  onMessage(cb: (data: Buffer, isBinary: boolean) => void): void;
  /** The client went away (its close code, 1006 when there was none). */
  onClose(cb: (code: number) => void): void;
  /** One text event: a string, or its UTF-8 bytes as they came from the provider (relayed without a copy). */
  send(data: string | Buffer): void;
  /** Bytes queued toward the client and not yet sent. */
  readonly bufferedAmount: number;
  readonly open: boolean;
  /** Ends the session's transport, saying `code` where the transport has close codes. */
  close(code: number, reason: string): void;
  /** Ends it at once, without a goodbye. */
  terminate(): void;
}

/** A message as one buffer (ws hands over fragments as a list, or an ArrayBuffer, by its binaryType). */
function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** A close reason fits in a control frame (123 bytes). */
const reasonOf = (text: string): string => (Buffer.byteLength(text) <= 123 ? text : Buffer.from(text).subarray(0, 120).toString('utf8'));

export function wsPort(ws: WebSocket): ClientPort {
  ws.on('error', () => undefined);
  const sendText = textSender(ws);
  return {
    onMessage: (cb) => void ws.on('message', (data: RawData, isBinary: boolean) => cb(toBuffer(data), isBinary)),
    onClose: (cb) => void ws.once('close', (code: number) => cb(code)),
    // The provider's bytes, not decoded and encoded again: one frame, one write (ws-frame.ts).
    send: sendText,
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    get open() {
      return ws.readyState === 1;
    },
    close: (code, reason) => {
      ws.close(code, reasonOf(reason));
      // A client that does not answer the close handshake is not waited for.
      setTimeout(() => ws.terminate(), 2000).unref();
    },
    terminate: () => ws.terminate(),
  };
}
