// An upstream answer through undici's dispatch (upstream/dispatched-answer.ts), against a real HTTP
// server: read whole without a stream, bounded, paused while nobody reads, its Readable made only
// when asked for, and aborted when the client leaves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { dispatchRequest } from '../../proxy/src/upstream/dispatched-answer.ts';
import { RequestAbort, upstreamSignal } from '../../proxy/src/pipeline/client-gone.ts';

const MB = 1024 * 1024;
let server: Server;
let pool: Pool;
/** How many bytes the slow route's server had written when the test looked. */
const written = new Map<string, number>();
const held = new Set<ServerResponse>();

before(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/chunks') {
      // Three chunks a few ms apart: the answer comes in several reads.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
      setTimeout(() => res.write('"' + 'x'.repeat(1000) + '"'), 5);
      setTimeout(() => res.end('}'), 10);
      return;
    }
    if (url.pathname === '/big') {
      // 32 MB written as fast as the connection takes it; what was written is recorded.
      const id = url.searchParams.get('id') ?? '';
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 97);
      let sent = 0;
      const pump = (): void => {
        while (sent < 32 * MB) {
          sent += chunk.length;
          written.set(id, sent);
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
      return;
    }
    if (url.pathname === '/hang') {
      // The head, then nothing: only an abort ends it.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 4 });
});

after(async () => {
  await pool.close();
  for (const res of held) res.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

const tooLarge = (): Error => new Error('too large');

test('an answer in several chunks is read whole, without its Readable being made', async () => {
  const answer = await dispatchRequest(pool, { method: 'GET', path: '/chunks' });
  assert.equal(answer.statusCode, 200);
  assert.equal(answer.headers['content-type'], 'application/json');
  const text = await answer.readText(MB, tooLarge);
  assert.deepEqual(JSON.parse(text!), { a: 'x'.repeat(1000) });
  assert.equal(answer.madeBody, false);
  // Read whole already: a second whole read is refused and the body is empty (as a consumed stream).
  assert.equal(answer.readText(MB, tooLarge), undefined);
  let rest = '';
  for await (const c of answer.body as AsyncIterable<Buffer>) rest += c.toString();
  assert.equal(rest, '');
});

test('a body asked for while a whole read waits is empty, and the read still gets every chunk', async () => {
  const answer = await dispatchRequest(pool, { method: 'GET', path: '/chunks' });
  const reading = answer.readText(MB, tooLarge)!;
  // The chunks belong to the read under way (an error path may still dump the body).
  let rest = '';
  for await (const c of answer.body as AsyncIterable<Buffer>) rest += c.toString();
  assert.equal(rest, '');
  assert.deepEqual(JSON.parse(await reading), { a: 'x'.repeat(1000) });
});

test('an answer past the limit is refused and its connection dropped', async () => {
  const answer = await dispatchRequest(pool, { method: 'GET', path: '/big?id=limit' });
  await assert.rejects(answer.readText(256 * 1024, tooLarge)!, /too large/);
  // The upstream stopped being read: it never got all 32 MB out.
  await new Promise((r) => setTimeout(r, 100));
  assert.ok((written.get('limit') ?? 0) < 32 * MB, `the server wrote ${written.get('limit')} bytes`);
});

test('an answer nobody reads yet is paused, not held in memory; a read then gets all of it', async () => {
  const answer = await dispatchRequest(pool, { method: 'GET', path: '/big?id=paused' });
  await new Promise((r) => setTimeout(r, 300));
  // The kernel buffers a few MB on both sides of a loopback connection; without the pause all 32 MB
  // would be through (and held by the gateway) by now.
  assert.ok((written.get('paused') ?? 0) < 16 * MB, `the server wrote ${written.get('paused')} bytes before anyone read`);
  const text = await answer.readText(64 * MB, tooLarge);
  assert.equal(text!.length, 32 * MB);
});

test('the Readable made after chunks came gives them first, then the rest, with back-pressure', async () => {
  const answer = await dispatchRequest(pool, { method: 'GET', path: '/big?id=body' });
  await new Promise((r) => setTimeout(r, 50));
  let size = 0;
  for await (const c of answer.body as AsyncIterable<Buffer>) {
    size += c.length;
    // A slow reader: the stream pauses the upstream between reads.
    if (size < 512 * 1024) await new Promise((r) => setImmediate(r));
  }
  assert.equal(size, 32 * MB);
  assert.equal(answer.madeBody, true);
  assert.equal(answer.readText(64 * MB, tooLarge), undefined);
});

test('a client that leaves mid-answer aborts the read, and the listener on its abort is let go once done', async () => {
  const abort = new RequestAbort();
  const gone = upstreamSignal(abort) as unknown as { on(e: 'abort', l: () => void): unknown };
  const answer = await dispatchRequest(pool, { method: 'GET', path: '/hang', signal: gone as never });
  const reading = answer.readText(MB, tooLarge)!;
  abort.abort();
  await assert.rejects(reading, (err: Error) => err.name === 'AbortError');
});

test('a finished answer lets go of its abort listener, read whole or as its Readable', async () => {
  // An emitter as the HTTP request's is (on/removeListener): one listener per upstream call would pile up.
  const spy = { listeners: new Set<() => void>(), on(_e: 'abort', l: () => void) { this.listeners.add(l); }, removeListener(_e: 'abort', l: () => void) { this.listeners.delete(l); } };
  const whole = await dispatchRequest(pool, { method: 'GET', path: '/chunks', signal: spy as never });
  assert.equal(spy.listeners.size, 1);
  await whole.readText(MB, tooLarge);
  assert.equal(spy.listeners.size, 0);
  const streamed = await dispatchRequest(pool, { method: 'GET', path: '/chunks', signal: spy as never });
  for await (const c of streamed.body as AsyncIterable<Buffer>) assert.ok(c.length > 0);
  await new Promise((r) => setImmediate(r));
  assert.equal(spy.listeners.size, 0);
});

test('an already aborted signal fails the request before anything is sent', async () => {
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(dispatchRequest(pool, { method: 'GET', path: '/chunks', signal: controller.signal }), (err: Error) => err.name === 'AbortError');
});

test('a connection refused is the request\'s rejection', async () => {
  const closed = new Pool('http://127.0.0.1:1');
  await assert.rejects(dispatchRequest(closed, { method: 'GET', path: '/' }), /ECONNREFUSED/);
  await closed.close();
});
