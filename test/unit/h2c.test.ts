// One port, two protocols: HTTP/1.1 as before, and HTTP/2 with prior knowledge (what the AWS SDK's
// Bedrock Runtime client sends) through the same request handler.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import { connect as tcp, type AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import { serveH2c } from '../../proxy/src/http/h2c.ts';

let server: Server;
let url: string;

/** Echoes what the handler saw, as the gateway's handlers would read it. */
function handler(req: IncomingMessage, res: ServerResponse): void {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.once('end', () => {
    const text = JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
}

before(async () => {
  // node:http's header and request timeouts short, and checked often: an h2c session must outlive them.
  server = createServer({ headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 }, handler);
  serveH2c(server, handler, { keepAliveMs: 5000 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeIdleConnections();
  server.closeAllConnections();
  server.close();
});

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

test('HTTP/1.1 requests are served as before, keep-alive included', async () => {
  for (const n of [1, 2]) {
    const res = await fetch(`${url}/v1/x?q=${n}`, { method: 'POST', body: `hello ${n}` });
    const echo = (await res.json()) as Echo;
    assert.deepEqual([echo.method, echo.url, echo.body], ['POST', `/v1/x?q=${n}`, `hello ${n}`]);
  }
});

test('HTTP/2 prior-knowledge requests reach the same handler, pseudo-headers turned into HTTP/1 ones', async () => {
  const session = connect(url);
  try {
    const headers = { 'content-type': 'text/plain', 'x-team': 'search' };
    // Two streams on one session, concurrently.
    const [a, b] = await Promise.all([ask(session, '/bedrock/model/openai%2Fgpt-4o/converse', 'one', headers), ask(session, '/cohere/v2/chat', 'two', headers)]);
    assert.equal(a.status, 200);
    assert.deepEqual([a.echo.method, a.echo.url, a.echo.body], ['POST', '/bedrock/model/openai%2Fgpt-4o/converse', 'one']);
    assert.deepEqual([b.echo.url, b.echo.body], ['/cohere/v2/chat', 'two']);
    assert.equal(a.echo.headers['x-team'], 'search');
    assert.equal(a.echo.headers.host, url.slice('http://'.length));
    assert.ok(Object.keys(a.echo.headers).every((k) => !k.startsWith(':')), Object.keys(a.echo.headers).join(','));
  } finally {
    session.close();
  }
});

/** One POST on a session: status and the handler's echo. */
function ask(session: ClientHttp2Session, path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; echo: Echo }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': path, ...headers });
    let status = 0;
    let text = '';
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.once('end', () => resolve({ status, echo: JSON.parse(text) as Echo }));
    req.once('error', reject);
    req.end(body);
  });
}

/**
 * A TCP connection whose bytes go out as the client writes them, except the first write: in pieces
 * of `piece` bytes, 3 ms apart (the preface in 1-byte pieces takes 72 ms, well inside the server's
 * 300 ms header timeout even on a loaded machine, which applies until the preface is complete).
 */
function trickledStart(piece: number): Duplex {
  const socket = tcp(Number(new URL(url).port), '127.0.0.1');
  let first = true;
  const stream = new Duplex({
    read: () => void socket.resume(),
    write: (chunk: Buffer, _enc, cb) => {
      if (!first) return void socket.write(chunk, cb);
      first = false;
      const pieces: Buffer[] = [];
      for (let i = 0; i < chunk.length; i += piece) pieces.push(chunk.subarray(i, i + piece));
      const next = () => {
        const p = pieces.shift();
        if (!p) return cb();
        socket.write(p);
        setTimeout(next, 3);
      };
      next();
    },
    final: (cb) => {
      socket.end();
      cb();
    },
    destroy: (err, cb) => {
      socket.destroy(err ?? undefined);
      cb(err);
    },
  });
  socket.on('data', (d: Buffer) => {
    if (!stream.push(d)) socket.pause();
  });
  socket.once('end', () => stream.push(null));
  socket.on('error', (err) => stream.destroy(err));
  return stream;
}

test('an HTTP/2 preface that arrives in pieces still starts a session', async () => {
  for (const piece of [1, 5, 16]) {
    const session = connect(url, { createConnection: () => trickledStart(piece) });
    try {
      const res = await ask(session, '/v1/split', `piece ${piece}`);
      assert.deepEqual([res.status, res.echo.url, res.echo.body], [200, '/v1/split', `piece ${piece}`]);
    } finally {
      session.close();
    }
  }
});

test('an h2c session outlives node:http header and request timeouts', async () => {
  const session = connect(url);
  try {
    assert.equal((await ask(session, '/v1/a', 'one')).status, 200);
    // Past both timeouts (300 ms) with node:http checking every 50 ms: the session is still open.
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal(session.closed || session.destroyed, false);
    assert.deepEqual((await ask(session, '/v1/b', 'two')).echo.body, 'two');
  } finally {
    session.close();
  }
});

test('the HTTP/2 preface after an HTTP/1.1 request on the same connection is not a session: the connection is closed', async () => {
  const socket = tcp(Number(new URL(url).port), '127.0.0.1');
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write('POST /v1/x HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi');
  await new Promise<void>((resolve) => {
    const check = () => (received.includes('"body":"hi"') ? resolve() : setTimeout(check, 5));
    check();
  });
  socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00');
  await closed;
  // After the HTTP/1.1 answer, nothing or node:http's 400: no HTTP/2 SETTINGS frame.
  const after = received.slice(received.indexOf('"body":"hi"}') + '"body":"hi"}'.length);
  assert.ok(after === '' || after.startsWith('HTTP/1.1 400'), JSON.stringify(after));
});
