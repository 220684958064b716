// One port, two protocols: HTTP/1.1 as before, and HTTP/2 with prior knowledge (what the AWS SDK's
// Bedrock Runtime client sends) through the same request handler.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
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
  server = createServer(handler);
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
    const ask = (path: string, body: string) =>
      new Promise<{ status: number; echo: Echo }>((resolve, reject) => {
        const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'text/plain', 'x-team': 'search' });
        let status = 0;
        let text = '';
        req.on('response', (h) => (status = Number(h[':status'])));
        req.on('data', (d: Buffer) => (text += d.toString()));
        req.once('end', () => resolve({ status, echo: JSON.parse(text) as Echo }));
        req.once('error', reject);
        req.end(body);
      });
    // Two streams on one session, concurrently.
    const [a, b] = await Promise.all([ask('/bedrock/model/openai%2Fgpt-4o/converse', 'one'), ask('/cohere/v2/chat', 'two')]);
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
