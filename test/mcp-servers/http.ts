// Test MCP servers over HTTP, in the test process: streamable HTTP (stateful sessions, so
// list_changed notifications reach the client) and the older SSE transport. An optional bearer
// token is required when given (headers from config reach the server).
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { buildServer, type Variant } from './tools.ts';
import { closeAtEnd } from '../helpers/cleanup.ts';

export interface TestMcpServer {
  /** Streamable HTTP endpoint. */
  httpUrl: string;
  /** SSE endpoint (GET opens the stream, POST /messages carries requests). */
  sseUrl: string;
  /** Requests seen (method, path, query, authorization). */
  seen: { method: string; path: string; query: string; authorization: string | undefined }[];
  /** tools/call requests over streamable HTTP: the tool's name and the request's `_meta` (trace context). */
  toolCalls: { name: string; meta: Record<string, unknown> | undefined }[];
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startTestMcpServer(opts: { variant?: Variant; token?: string; port?: number } = {}): Promise<TestMcpServer> {
  const variant = opts.variant ?? 'basic';
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const seen: TestMcpServer['seen'] = [];
  const toolCalls: TestMcpServer['toolCalls'] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ method: req.method ?? '', path: url.pathname, query: url.search, authorization: req.headers.authorization });
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad token' }));
      return;
    }
    if (url.pathname === '/mcp') {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const rpc = body as { method?: string; params?: { name?: string; _meta?: Record<string, unknown> } } | undefined;
      if (rpc?.method === 'tools/call') toolCalls.push({ name: String(rpc.params?.name), meta: rpc.params?._meta });
      if (!transport) {
        transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, transport!) });
        await buildServer(variant, req.headers).connect(transport);
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (url.pathname === '/sse' && req.method === 'GET') {
      const t = new SSEServerTransport('/messages', res);
      sse.set(t.sessionId, t);
      res.on('close', () => sse.delete(t.sessionId));
      await buildServer(variant, req.headers).connect(t);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const t = sse.get(url.searchParams.get('sessionId') ?? '');
      if (!t) {
        res.writeHead(404).end('no session');
        return;
      }
      await t.handlePostMessage(req, res, await readJson(req));
      return;
    }
    res.writeHead(404).end('not found');
  };
  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    httpUrl: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    seen,
    toolCalls,
    // Also closed at the end of the file, should a failed hook skip the test's own close.
    close: closeAtEnd(async () => {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
      for (const t of sse.values()) await t.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }),
  };
}
