// The relay's own WebSocket text frames (realtime/ws-frame.ts): byte for byte what `ws` frames the
// same payload as, read back by `ws`'s own Receiver at every length boundary, masked and not; and on
// real sockets on loopback, events both ways arrive whole and in order, with deflate negotiated too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import * as wsModule from 'ws';
import { WebSocket, WebSocketServer } from 'ws';
import { textFrame, textFrameOf, textSender } from '../../proxy/src/realtime/ws-frame.ts';

interface FrameOptions {
  fin: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
  rsv1: boolean;
  maskBuffer?: Buffer;
  generateMask?: (mask: Buffer) => void;
}
interface WsInternals {
  Sender: { frame(data: Buffer, options: FrameOptions): Buffer[] };
  Receiver: new (options: { isServer: boolean; maxPayload?: number }) => NodeJS.WritableStream & { on(event: 'message', cb: (data: Buffer, isBinary: boolean) => void): void; on(event: 'error', cb: (err: Error) => void): void };
}
const { Sender, Receiver } = wsModule as unknown as WsInternals;

const LENGTHS = [0, 1, 125, 126, 127, 65535, 65536, 70000];
const payloadOf = (n: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => 'abcdefghij'[i % 10]).join(''));

test('a frame is the bytes ws makes of the same payload: unmasked (a server) and masked (a client), at each header size', () => {
  const mask = Buffer.from([0x12, 0x9a, 0x00, 0xff]);
  for (const n of LENGTHS) {
    const payload = payloadOf(n);
    const plain = Buffer.concat(Sender.frame(Buffer.from(payload), { fin: true, opcode: 1, mask: false, readOnly: true, rsv1: false }));
    assert.deepEqual(textFrame(payload), plain, `unmasked, ${n} bytes`);
    const masked = Buffer.concat(Sender.frame(Buffer.from(payload), { fin: true, opcode: 1, mask: true, readOnly: true, rsv1: false, maskBuffer: Buffer.alloc(4), generateMask: (m) => mask.copy(m) }));
    assert.deepEqual(textFrame(payload, mask), masked, `masked, ${n} bytes`);
    assert.deepEqual(textFrameOf(payload.toString(), mask), masked, `masked from a string, ${n} bytes`);
    // The payload handed in is not touched (it is the provider's frame, maybe still referenced).
    assert.deepEqual(payload, payloadOf(n));
  }
});

test('ws reads each frame back as the text sent (multi-byte UTF-8 too), a server frame unmasked and a client frame masked', async () => {
  for (const isServer of [false, true]) {
    const receiver = new Receiver({ isServer, maxPayload: 0 });
    const got: string[] = [];
    receiver.on('message', (data, isBinary) => {
      assert.equal(isBinary, false);
      got.push(data.toString('utf8'));
    });
    receiver.on('error', (err) => assert.fail(err));
    const sent: string[] = [];
    for (const n of LENGTHS) {
      const text = `{"type":"x","t":"é€😀${payloadOf(n).toString()}"}`;
      sent.push(text);
      // A server reads masked frames only (RFC 6455 §5.1): the mask is what a client must send.
      const mask = isServer ? Buffer.from([1, 2, 3, 4]) : undefined;
      receiver.write(n % 2 ? textFrame(Buffer.from(text), mask) : textFrameOf(text, mask));
    }
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(got, sent, isServer ? 'masked, read by a server' : 'unmasked, read by a client');
  }
});

async function pair(deflate: boolean): Promise<{ server: WebSocketServer; near: WebSocket; far: WebSocket }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: deflate });
  await new Promise((r) => server.once('listening', r));
  const accepted = new Promise<WebSocket>((r) => server.once('connection', r));
  const far = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`, { perMessageDeflate: deflate });
  await new Promise((r, j) => {
    far.once('open', r);
    far.once('error', j);
  });
  return { server, near: await accepted, far };
}

const collect = (ws: WebSocket, n: number): Promise<string[]> =>
  new Promise((resolve) => {
    const got: string[] = [];
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      got.push(`${isBinary ? 'binary' : 'text'}:${data.toString()}`);
      if (got.length === n) resolve(got);
    });
  });

for (const deflate of [false, true]) {
  test(`on real sockets, events both ways arrive whole and in order${deflate ? ' (permessage-deflate negotiated: ws frames them)' : ''}`, async () => {
    const { server, near, far } = await pair(deflate);
    try {
      const events = LENGTHS.map((n, i) => `{"type":"e${i}","d":"${payloadOf(n).toString()}"}`);
      const atFar = collect(far, events.length);
      const atNear = collect(near, events.length);
      // Which path framed them: ws.send is counted (the direct write is the point of the module).
      let viaWs = 0;
      for (const socket of [near, far]) {
        const send = socket.send.bind(socket);
        socket.send = ((...args: Parameters<WebSocket['send']>) => {
          viaWs++;
          send(...args);
        }) as WebSocket['send'];
      }
      const fromServer = textSender(near);
      const fromClient = textSender(far);
      events.forEach((e, i) => fromServer(i % 2 ? e : Buffer.from(e)));
      events.forEach((e, i) => fromClient(i % 2 ? Buffer.from(e) : e));
      const expected = events.map((e) => `text:${e}`);
      assert.deepEqual(await atFar, expected);
      assert.deepEqual(await atNear, expected);
      assert.equal(viaWs, deflate ? 2 * events.length : 0, deflate ? 'deflate negotiated: every event through ws.send' : 'no extension: every event written directly');
      // A closed socket's send goes to ws, which drops it the way it always has (no throw, no frame).
      const closed = new Promise((r) => far.once('close', r));
      near.close(1000, 'done');
      await closed;
      const before = viaWs;
      fromServer('{"type":"late"}');
      assert.equal(viaWs, before + 1);
    } finally {
      far.terminate();
      near.terminate();
      await new Promise((r) => server.close(r));
    }
  });
}
