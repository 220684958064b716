// A relayed event as one WebSocket text frame in one socket write. `ws.send` makes two objects of
// options, a header buffer and a two-element list per frame, and writes a server's frame as header
// and payload through cork/uncork (a writev); at 1,000 sessions that framing was about a third of
// what the gateway allocated per event, and its young collections are a share of the relay's tail.
// Here the header and payload are laid in one buffer (from Node's pool for small events) and the
// socket gets one write. Only where `ws` would send the same bytes the same way: an open socket,
// no extension negotiated (no permessage-deflate: a frame's RSV bits stay clear), and no frame of
// `ws`'s own queued (its sender queues only while compressing or reading a Blob, neither used here).
// Anything else, and a `ws` whose internals are not laid out as read here, goes through `ws.send`.
import { randomFillSync } from 'node:crypto';
import type { WebSocket } from 'ws';

const OPCODE_TEXT = 0x81; // FIN + text

/** Bytes of a text frame's header for a payload of `length` bytes (RFC 6455 §5.2). */
export function headerLength(length: number, masked: boolean): number {
  return (length < 126 ? 2 : length < 65536 ? 4 : 10) + (masked ? 4 : 0);
}

/**
 * One final text frame of `payload` (UTF-8 bytes), into a buffer of its own. `mask` (4 bytes) masks
 * it, as a client's frames must be; a server's are not masked. Pure: the mask is the caller's.
 */
export function textFrame(payload: Buffer, mask?: Uint8Array): Buffer {
  const length = payload.length;
  const offset = headerLength(length, mask !== undefined);
  const frame = Buffer.allocUnsafe(offset + length);
  writeHeader(frame, length, mask);
  if (!mask) payload.copy(frame, offset);
  else for (let i = 0; i < length; i++) frame[offset + i] = payload[i] ^ mask[i & 3];
  return frame;
}

/** The same frame of a string's UTF-8 bytes (encoded straight into the frame). */
export function textFrameOf(text: string, mask?: Uint8Array): Buffer {
  const length = Buffer.byteLength(text);
  const offset = headerLength(length, mask !== undefined);
  const frame = Buffer.allocUnsafe(offset + length);
  writeHeader(frame, length, mask);
  frame.write(text, offset, 'utf8');
  if (mask) for (let i = 0; i < length; i++) frame[offset + i] ^= mask[i & 3];
  return frame;
}

function writeHeader(frame: Buffer, length: number, mask: Uint8Array | undefined): void {
  frame[0] = OPCODE_TEXT;
  const maskBit = mask ? 0x80 : 0;
  let at = 2;
  if (length < 126) frame[1] = maskBit | length;
  else if (length < 65536) {
    frame[1] = maskBit | 126;
    // Byte by byte: Buffer's writeUInt*BE range checks showed in the relay's allocation profile.
    frame[2] = length >>> 8;
    frame[3] = length & 0xff;
    at = 4;
  } else {
    frame[1] = maskBit | 127;
    const high = Math.floor(length / 2 ** 32);
    frame[2] = high >>> 24;
    frame[3] = (high >>> 16) & 0xff;
    frame[4] = (high >>> 8) & 0xff;
    frame[5] = high & 0xff;
    frame[6] = length >>> 24;
    frame[7] = (length >>> 16) & 0xff;
    frame[8] = (length >>> 8) & 0xff;
    frame[9] = length & 0xff;
    at = 10;
  }
  if (mask) {
    frame[at] = mask[0];
    frame[at + 1] = mask[1];
    frame[at + 2] = mask[2];
    frame[at + 3] = mask[3];
  }
}

/** What of `ws`'s internals the direct write reads (ws 8: lib/websocket.js, lib/sender.js). */
interface WsInternals {
  _socket?: { write(chunk: Buffer): boolean };
  _sender?: { _state?: unknown };
  _extensions?: Record<string, unknown>;
  _isServer?: boolean;
}

/** Masks drawn from a pool of random bytes, refilled when spent (as `ws` itself does). */
const POOL_SIZE = 8 * 1024;
const pool = Buffer.alloc(POOL_SIZE);
let poolAt = POOL_SIZE;
const mask = Buffer.alloc(4);
function nextMask(): Buffer {
  if (poolAt === POOL_SIZE) {
    randomFillSync(pool);
    poolAt = 0;
  }
  mask[0] = pool[poolAt++];
  mask[1] = pool[poolAt++];
  mask[2] = pool[poolAt++];
  mask[3] = pool[poolAt++];
  return mask;
}

/** The one options object of every fallback send. */
const AS_TEXT = { binary: false } as const;

/**
 * A text-event sender for an open `ws` socket: one frame, one write where that is the same on the
 * wire (see the top of this file), `ws.send` otherwise. A client socket's frames are masked with
 * fresh random keys, as the protocol asks of a client.
 */
export function textSender(ws: WebSocket): (data: string | Buffer) => void {
  const inner = ws as unknown as WsInternals;
  const fallback = (data: string | Buffer): void => ws.send(data, AS_TEXT);
  // A `ws` not laid out as read here (another major version): its own send for everything.
  if (typeof inner._isServer !== 'boolean' || inner._extensions === undefined || inner._sender === undefined || !('_state' in inner._sender)) return fallback;
  // Extensions are settled by the handshake, before any sender is made: one with any, `ws.send`.
  if (Object.keys(inner._extensions).length > 0) return fallback;
  const masked = !inner._isServer;
  const sender = inner._sender;
  return (data) => {
    const socket = inner._socket;
    // 0 is the sender's DEFAULT state: nothing of its own queued ahead of this frame.
    if (ws.readyState !== 1 || socket === undefined || sender._state !== 0) {
      fallback(data);
      return;
    }
    const key = masked ? nextMask() : undefined;
    socket.write(typeof data === 'string' ? textFrameOf(data, key) : textFrame(data, key));
  };
}
