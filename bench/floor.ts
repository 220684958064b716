// The floor: the least a Node passthrough can do on this machine. node:http in front, an undici
// keep-alive Pool behind; read the body, JSON.parse, strip the `openai/` model prefix, forward,
// and pipe the answer back (SSE included). No validation, no retries, no metrics, no logging.
//
//   node bench/floor.ts --port 8100 --upstream http://127.0.0.1:9000/openai
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8100' },
    host: { type: 'string', default: '127.0.0.1' },
    upstream: { type: 'string', default: 'http://127.0.0.1:9000/openai' },
    key: { type: 'string', default: 'sk-bench' },
  },
  strict: true,
});

const upstream = new URL(values.upstream);
const basePath = upstream.pathname.replace(/\/+$/, '');
const authorization = `Bearer ${values.key}`;
const pool = new Pool(upstream.origin, {
  connections: 5000,
  keepAliveTimeout: 30_000,
  headersTimeout: 0,
  bodyTimeout: 0,
});

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body: { model?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: unknown };
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
      return;
    }
    if (typeof body.model === 'string' && body.model.startsWith('openai/')) body.model = body.model.slice(7);
    pool
      .request({
        method: 'POST',
        path: basePath + (req.url ?? '/'),
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify(body),
      })
      .then(
        (up) => {
          if (res.destroyed) {
            // The client left while we waited: drop the answer, keep the upstream connection.
            up.body.dump().catch(() => {});
            return;
          }
          const headers: Record<string, string> = {};
          const type = up.headers['content-type'];
          if (typeof type === 'string') headers['content-type'] = type;
          const length = up.headers['content-length'];
          if (typeof length === 'string') headers['content-length'] = length;
          res.writeHead(up.statusCode, headers);
          // pipe(), not stream.pipeline(): pipeline aborts an internal AbortController (a
          // DOMException with a stack trace) on every finish, ~7% of this process's CPU.
          up.body.on('error', () => res.destroy());
          res.on('close', () => {
            if (!up.body.readableEnded) up.body.destroy();
          });
          up.body.pipe(res);
        },
        () => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"upstream failed"}}');
        },
      );
  });
});

server.listen(Number(values.port), values.host);
const stop = () => {
  server.close();
  server.closeIdleConnections();
  void pool.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
